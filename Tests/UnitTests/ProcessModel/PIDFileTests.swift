#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// A server removes the pid file at its stop only while the file names it.
struct PIDFileTests {
    @Test func aServerRemovesItsOwnPIDFile() {
        let scratch = ScratchDirectory("pid-file")
        let file = PIDFile(path: scratch.path + "/ireporter.pid")
        file.write(pid: 4242)
        #expect(readFile(file.path) == Array("4242\n".utf8))
        file.remove(naming: 4242)
        #expect(access(file.path, F_OK) != 0)
    }

    /// A second server of the installation, started for an upgrade, wrote its own.
    @Test func anotherServersPIDFileIsLeft() {
        let scratch = ScratchDirectory("pid-file")
        let file = PIDFile(path: scratch.path + "/ireporter.pid")
        file.write(pid: 4243)
        file.remove(naming: 4242)
        #expect(readFile(file.path) == Array("4243\n".utf8))
    }
}
