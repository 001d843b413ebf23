#if canImport(Glibc)
import Glibc
#endif
import IReporterKit

/// A private S3-compatible server on loopback for the tests
/// (scripts/s3-server.py: moto, with signature checking on), started when
/// first used and stopped when the test process exits.
public final class S3TestServer: @unchecked Sendable {
    /// The one the suites share, started once per test process.
    public static let shared: S3TestServer = {
        let server = S3TestServer(port: 19000 + Int32(getpid() % 20000))
        atexit { S3TestServer.shared.stop() }
        return server
    }()

    /// moto is importable (scripts/deps.sh installs it), or the run requires
    /// every service (`make test`: missing is a failure, not a skip).
    public static var available: Bool {
        system("python3 -c 'import moto.server' >/dev/null 2>&1") == 0
            || getenv("IREPORTER_REQUIRE_SERVICES").map { String(cString: $0) } == "1"
    }

    public let port: Int32
    public let directory: String
    /// The bucket's settings, with the key the server made.
    public private(set) var settings: S3Settings
    private var pid: pid_t = 0

    init(port: Int32) {
        self.port = port
        directory = "/tmp/ireporter-s3-test-\(port)"
        _ = system("rm -rf '\(directory)'")
        mkdir(directory, 0o700)
        var root = #filePath
        for _ in 0..<3 { root = String(root[..<root.lastIndex(of: "/")!]) }
        let arguments = ["python3", "\(root)/scripts/s3-server.py", "--port", String(port), "--state-dir", directory]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The test threads block signals, and a spawned child inherits the mask:
        // unblocked, so that SIGTERM stops it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var child: pid_t = 0
        let status = posix_spawnp(&child, "python3", nil, &attributes, &argv, environ)
        precondition(status == 0, "cannot start scripts/s3-server.py: \(String(cString: strerror(status)))")
        pid = child
        for _ in 0..<3000 {
            if let text = fileContents("\(directory)/s3.url"), let url = String(decoding: text, as: UTF8.self).split(separator: "\n").first,
               let settings = try? S3Settings(url: String(url)) {
                self.settings = settings
                return
            }
            usleep(10_000)
        }
        preconditionFailure("scripts/s3-server.py on port \(port) was not ready within 30 s (moto: scripts/deps.sh installs it)")
    }

    deinit { stop() }

    /// Stops it (SIGTERM) and waits for it to go.
    public func stop() {
        guard pid != 0 else { return }
        kill(pid, SIGCONT)  // in case a test left it frozen
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        pid = 0
    }

    /// Freezes it (SIGSTOP) or lets it go on (SIGCONT): an outage in which
    /// connections are accepted by the kernel and never answered.
    public func freeze(_ frozen: Bool) { kill(pid, frozen ? SIGSTOP : SIGCONT) }
}
