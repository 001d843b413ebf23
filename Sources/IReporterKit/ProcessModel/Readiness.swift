#if canImport(Glibc)
import Glibc
#endif

/// The readiness page (`ready_path`): whether this host can serve the API
/// now, for a balancer; the ping page only says the server is alive. Each
/// probe asks its service one cheap question (bounded by its connect
/// timeout); the answer is kept `keptMillis` so that a balancer's polling
/// costs at most one question per service per second and worker.
final class Readiness {
    struct Probe {
        let name: String
        /// nil when the service answered; else what went wrong.
        let failure: () -> String?
    }

    private let probes: [Probe]
    private let clock: any TimeSource
    static let keptMillis: Int64 = 1000
    private var kept: (at: Int64, failures: [String])?

    init(probes: [Probe], clock: any TimeSource = MonotonicClock()) {
        (self.probes, self.clock) = (probes, clock)
    }

    /// What is down: "database: ..." lines; empty when ready.
    func failures() -> [String] {
        let time = clock.now.millis
        if let kept, time - kept.at < Self.keptMillis { return kept.failures }
        let failures = probes.compactMap { probe in probe.failure().map { "\(probe.name): \($0)" } }
        kept = (time, failures)
        return failures
    }

    /// A worker's probes: its own database connection, the upload folder
    /// (where every upload is spooled, with a bucket too), and Redis and the
    /// bucket when configured (connections of their own, made at the first probe).
    static func probes(_ configuration: Configuration, database: DatabaseConnection) -> [Probe] {
        var probes = [Probe(name: "database") {
            do { _ = try database.query("SELECT 1"); return nil } catch { return "\(error)" }
        }]
        probes.append(Probe(name: "upload_dir") { [directory = configuration.uploadDirectory] in uploadFolderFailure(directory) })
        if let settings = configuration.redisSettings {
            let redis = RedisConnection(settings: settings)
            probes.append(Probe(name: "redis") {
                do {
                    let reply = try redis.command("PING")
                    return reply == .status("PONG") ? nil : "PING answered \(reply)"
                } catch {
                    redis.disconnect()
                    return "\(error)"
                }
            })
        }
        if let settings = configuration.s3Settings {
            let bucket = S3Client(settings: settings)
            // A HEAD of a key that need not exist: the bucket answers, and accepts the key.
            probes.append(Probe(name: "s3") {
                do { _ = try bucket.exists("ireporter-ready"); return nil } catch { return "\(error)" }
            })
        }
        return probes
    }

    /// Why no upload could be stored in `directory` now: mounted read-only,
    /// full for the server's user (statvfs, no write), or the folder or its
    /// photos' tree not the server's to write in (a backup restored as root:
    /// every upload would fail); nil otherwise.
    static func uploadFolderFailure(_ directory: String) -> String? {
        guard let space = FolderSpace(directory) else { return "\(directory): \(String(cString: strerror(errno)))" }
        let tree = "\(directory)/\(PhotoTree.folderName)"
        for folder in [directory, tree] where access(folder, F_OK) == 0 && access(folder, W_OK | X_OK) != 0 {
            return "\(folder) is not writable by uid \(geteuid()) (`ireporter check` says what)"
        }
        return uploadFolderFailure(directory, space)
    }

    static func uploadFolderFailure(_ directory: String, _ space: FolderSpace) -> String? {
        if space.readOnly { return "\(directory) is on a file system mounted read-only" }
        if space.freeBytes == 0 || space.freeFiles == 0 { return "\(directory) is full" }
        return nil
    }
}
