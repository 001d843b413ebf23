#if canImport(Glibc)
import Glibc
#endif
@testable import IReporterKit
import Testing
import TestSupport

/// `ireporter check`'s listen line: tried without taking the address from a server that has it.
struct ListenProbeTests {
    @Test func aTCPAddressIsFreeOrInUseByARunningServer() throws {
        let listener = try ListeningSocket.open("127.0.0.1:0", mode: 0o660, backlog: 8)
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener.fd, $0, &length) }
        }
        let taken = "127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        #expect(ListeningSocket.probe(taken) == .inUse("\(taken) is in use (by a running server?)"))
        close(listener.fd)
        #expect(ListeningSocket.probe(taken) == .usable("\(taken) can be bound"))
        if case .unusable(let why) = ListeningSocket.probe("127.0.0.1:notaport") {
            #expect(why.contains("HOST:PORT"))
        } else {
            Issue.record("a port that is no number is unusable")
        }
    }

    @Test func aUnixPathNeedsAWritableFolder() throws {
        let scratch = ScratchDirectory("listen")
        let path = "\(scratch.path)/fcgi.sock"
        #expect(ListeningSocket.probe(path) == .usable("\(path) can be made (\(scratch.path) is writable)"))
        let listener = try ListeningSocket.open(path, mode: 0o660, backlog: 8)
        #expect(ListeningSocket.probe(path) == .inUse("\(path) is in use (by a running server?)"))
        close(listener.fd)
        #expect(ListeningSocket.probe("\(scratch.path)/missing/fcgi.sock")
                == .unusable("cannot make \(scratch.path)/missing/fcgi.sock: its folder \(scratch.path)/missing: No such file or directory"))
    }
}
