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
        let server = S3TestServer(port: TestPorts.s3)
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
        do {
            pid = try SpawnedProgram(["python3", "\(root)/scripts/s3-server.py", "--port", String(port),
                                      "--state-dir", directory]).pid
        } catch {
            preconditionFailure("\(error)")
        }
        for _ in 0..<3000 {
            if let url = Self.firstLine(of: "\(directory)/s3.url"), let settings = try? S3Settings(url: url) {
                self.settings = settings
                return
            }
            usleep(10_000)
        }
        preconditionFailure("scripts/s3-server.py on port \(port) was not ready within 30 s (moto: scripts/deps.sh installs it)")
    }

    deinit { stop() }

    /// The file's first line (written whole by a rename); nil until it is there.
    private static func firstLine(of path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var line = [UInt8](repeating: 0, count: 1024)
        let count = fread(&line, 1, line.count, file)
        return String(decoding: line.prefix(count), as: UTF8.self).split(separator: "\n").first.map(String.init)
    }

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
