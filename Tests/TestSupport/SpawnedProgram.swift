#if canImport(Glibc)
import Glibc
#endif

/// A program the tests start (a server, a script), looked up in PATH like a
/// shell does. The test threads block signals and a child inherits the
/// mask: it starts with none blocked, so that SIGTERM stops it and the
/// servers it starts.
public struct SpawnedProgram {
    public struct Failure: Error, CustomStringConvertible {
        public let program: String
        public let code: Int32
        public var description: String { "cannot start \(program): \(String(cString: strerror(code)))" }
    }

    public let pid: pid_t

    public init(_ arguments: [String]) throws(Failure) {
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var child: pid_t = 0
        let status = posix_spawnp(&child, arguments[0], nil, &attributes, &argv, environ)
        guard status == 0 else { throw Failure(program: arguments[0], code: status) }
        pid = child
    }

    /// Waits for its end; its exit status (-1 when a signal ended it).
    public func exitStatus() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
    }
}
