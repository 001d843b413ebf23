#if canImport(Glibc)
import Glibc
#endif
import IReporterKit
import Synchronization

/// A private redis-server on loopback for the tests: its own port and
/// folder under /tmp, started when first used and stopped when the test
/// process exits. Each test takes a database of its own (`freshDatabase`),
/// so tests running at once never see each other's keys.
public final class RedisTestServer: @unchecked Sendable {
    /// The one the suites share, started once per test process.
    public static let shared: RedisTestServer = {
        let server = RedisTestServer(port: TestPorts.redis)
        atexit { RedisTestServer.shared.stop() }
        return server
    }()

    /// redis-server is installed (scripts/deps.sh), or the run requires
    /// every service (`make test`: missing is a failure, not a skip).
    public static var available: Bool {
        access("/usr/bin/redis-server", X_OK) == 0 || getenv("IREPORTER_REQUIRE_SERVICES").map { String(cString: $0) } == "1"
    }

    public let port: Int32
    public let directory: String
    private var pid: pid_t = 0
    private let lastDatabase = Mutex<Int32>(0)

    /// Starts a server; a test that stops and restarts Redis makes one of its own.
    public init(port: Int32) {
        self.port = port
        directory = "/tmp/ireporter-redis-test-\(port)"
        mkdir(directory, 0o700)
        start()
    }

    deinit { stop() }

    /// Runs redis-server (again) and waits until it answers.
    public func start() {
        guard pid == 0 else { return }
        let arguments = ["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--dir", directory,
                         "--save", "", "--appendonly", "no", "--databases", "4096",
                         "--logfile", "\(directory)/redis.log", "--daemonize", "no"]
        do {
            pid = try SpawnedProgram(arguments).pid
        } catch {
            preconditionFailure("\(error) (scripts/deps.sh installs redis-server)")
        }
        let probe = RedisConnection(settings: settings(database: 0))
        for _ in 0..<500 {
            if (try? probe.command("PING")) == .status("PONG") { return }
            usleep(10_000)
        }
        preconditionFailure("redis-server on port \(port) did not answer within 5 s (see \(directory)/redis.log)")
    }

    /// Stops it (SIGTERM) and waits for it to go.
    public func stop() {
        guard pid != 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        pid = 0
    }

    public func settings(database: Int32) -> RedisSettings {
        var settings = RedisSettings()
        settings.address = .tcp(host: "127.0.0.1", port: port)
        settings.database = Int(database)
        settings.timeoutMillis = 2000
        return settings
    }

    /// Settings for a database no other test uses, emptied.
    public func freshDatabase() -> RedisSettings {
        let database = lastDatabase.withLock { last in
            last += 1
            return last
        }
        let settings = settings(database: database)
        _ = try? RedisConnection(settings: settings).command("FLUSHDB")
        return settings
    }

}
