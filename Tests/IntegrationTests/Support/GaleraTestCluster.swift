#if canImport(Glibc)
import Glibc
#endif
@testable import IReporterKit
import TestSupport

/// The three-node Galera cluster of `scripts/galera.sh` on loopback, started
/// when first used (about 15 s) and stopped when the test process exits.
final class GaleraTestCluster: Sendable {
    static let shared: GaleraTestCluster = {
        let cluster = GaleraTestCluster(port: TestPorts.galera)
        atexit { GaleraTestCluster.shared.stop() }
        return cluster
    }()

    /// galera-4 is installed (scripts/deps.sh), or the run requires every
    /// service (`make test`: missing is a failure, not a skip).
    static var available: Bool {
        access("/usr/lib/galera/libgalera_smm.so", R_OK) == 0 && getuid() == 0 || TestServices.required
    }

    let port: Int
    let directory: String
    private let script = "\(TestServices.repositoryRoot)/scripts/galera.sh"

    private init(port: Int) {
        self.port = port
        directory = "/tmp/ireporter-galera-test-\(port)"
        let status = Self.run(["/bin/bash", script, "start", directory, String(port)])
        precondition(status == 0, "scripts/galera.sh start \(directory) \(port) failed (exit \(status)): see \(directory)/node*/error.log")
    }

    /// Stops the nodes and removes their data.
    func stop() {
        guard Self.run(["/bin/bash", script, "stop", directory, String(port)]) == 0 else { return }
        _ = Self.run(["/bin/rm", "-rf", directory])
    }

    /// The application user's settings, on the given nodes (1-3).
    func settings(nodes: [Int], syncWait: Int = 1) throws -> DatabaseSettings {
        let password = String(decoding: readFile("\(directory)/ireport.password") ?? [], as: UTF8.self)
        var settings = try DatabaseSettings(url: "mysql://ireport:\(password)@127.0.0.1/iReport")
        settings.nodes = nodes.map { DatabaseNode(host: "127.0.0.1", port: UInt32(port + $0 - 1)) }
        settings.syncWait = syncWait
        return settings
    }

    /// Root on node `n` through its socket (for SET GLOBAL and KILL).
    func root(node n: Int) throws -> DatabaseConnection {
        DatabaseConnection(settings: try DatabaseSettings(url: "mysql://root@localhost/iReport?socket=\(directory)/node\(n)/mysqld.sock"))
    }

    /// Runs a program to its end; its exit status.
    static func run(_ arguments: [String]) -> Int32 {
        (try? SpawnedProgram(arguments).exitStatus()) ?? -1
    }
}
