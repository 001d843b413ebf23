#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// Which failures a command is sent again after, against a socket that
/// takes connections and never answers (no Redis needed).
struct RedisConnectionTests {
    /// A listening Unix socket nobody accepts on: connections wait in its
    /// backlog, so they can be counted afterwards.
    final class SilentServer {
        let path: String
        private let fd: Int32

        init(in directory: ScratchDirectory) throws {
            path = directory.path + "/redis.sock"
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0, listen(fd, 16) == 0 else { throw SystemError("listen on \(path)") }
        }

        deinit { close(fd) }

        /// The connections made to it so far.
        func connectionsWaiting() -> Int {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var count = 0
            while case let connection = accept(fd, nil, nil), connection >= 0 {
                close(connection)
                count += 1
            }
            return count
        }
    }

    /// The command went out and no reply came in time: it may have run
    /// (an INCR, a SET NX of a lock), so it is not sent again.
    @Test func aCommandWhoseReplyTimedOutIsNotSentAgain() throws {
        let scratch = ScratchDirectory("redis-silent")
        let server = try SilentServer(in: scratch)
        var settings = RedisSettings()
        settings.address = .unix(path: server.path)
        settings.timeoutMillis = 100
        let connection = RedisConnection(settings: settings)
        #expect(throws: RedisError.self) { try connection.command(Array("INCR".utf8), Array("count".utf8)) }
        do {
            try connection.command(Array("INCR".utf8), Array("count".utf8))
        } catch {
            #expect(error.isReplyTimeout && error.isConnectionLost, "\(error)")
        }
        #expect(server.connectionsWaiting() == 2, "one connection per command, none again")
    }
}
