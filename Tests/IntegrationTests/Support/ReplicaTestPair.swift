#if canImport(Glibc)
import Glibc
#endif
@testable import IReporterKit
import TestSupport

/// The primary and GTID replica of `scripts/replica.sh` on loopback, started
/// when first used (about 5 s) and stopped when the test process exits.
final class ReplicaTestPair: Sendable {
    static let shared: ReplicaTestPair = {
        let pair = ReplicaTestPair(port: TestPorts.replicaPair)
        atexit { ReplicaTestPair.shared.stop() }
        return pair
    }()

    /// Root may start MariaDB, or the run requires every service.
    static var available: Bool { getuid() == 0 || TestServices.required }

    let port: Int
    let directory: String
    private let script = "\(TestServices.repositoryRoot)/scripts/replica.sh"

    private init(port: Int) {
        self.port = port
        directory = "/tmp/ireporter-replica-test-\(port)"
        start()
    }

    /// Starts whichever of the two is not running, and replication.
    func start() {
        let status = GaleraTestCluster.run(["/bin/bash", script, "start", directory, String(port)])
        precondition(status == 0, "scripts/replica.sh start \(directory) \(port) failed (exit \(status))")
    }

    /// Stops the replica's server only (the primary runs on).
    func stopReplica() {
        _ = GaleraTestCluster.run(["/bin/bash", "\(TestServices.repositoryRoot)/scripts/mariadb.sh", "stop", "\(directory)/replica"])
    }

    /// Stops both and removes their data.
    func stop() {
        guard GaleraTestCluster.run(["/bin/bash", script, "stop", directory]) == 0 else { return }
        _ = GaleraTestCluster.run(["/bin/rm", "-rf", directory])
    }

    /// The application user's settings on the primary (`replica`: on the replica).
    func settings(replica: Bool = false) throws -> DatabaseSettings {
        let password = String(decoding: readFile("\(directory)/primary/ireport.password") ?? [], as: UTF8.self)
        return try DatabaseSettings(url: "mysql://ireport:\(password)@127.0.0.1:\(port + (replica ? 1 : 0))/iReport")
    }

    /// Root on the replica through its socket (replication control).
    func replicaRoot() throws -> DatabaseConnection {
        DatabaseConnection(settings: try DatabaseSettings(url: "mysql://root@localhost/iReport?socket=\(directory)/replica/mysqld.sock"))
    }
}
