#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit

/// `DatabaseConnection` on a real three-node Galera cluster
/// (`GaleraTestCluster`): node choice, read-your-writes across nodes, and
/// transactions run again after a real certification conflict. Each test
/// works in a table of its own.
@Suite(.serialized, .enabled(if: GaleraTestCluster.available, "needs galera-4 and root: scripts/deps.sh, make test"))
struct GaleraIntegrationTests {
    let cluster = GaleraTestCluster.shared

    private func freshTable(_ name: String) throws -> DatabaseConnection {
        let database = DatabaseConnection(settings: try cluster.settings(nodes: [1]))
        try database.command("DROP TABLE IF EXISTS \(name)")
        try database.command("CREATE TABLE \(name) (id int NOT NULL PRIMARY KEY, n int NOT NULL) ENGINE=InnoDB")
        return database
    }

    @Test func aConnectionGoesToASyncedNodeAndAvoidsOneThatIsNot() throws {
        let root3 = try cluster.root(node: 3)
        try root3.command("SET GLOBAL wsrep_desync = ON")  // node 3: Donor/Desynced, not Synced
        defer { _ = try? root3.command("SET GLOBAL wsrep_desync = OFF") }
        let database = DatabaseConnection(settings: try cluster.settings(nodes: [3, 1]), firstNode: 0)
        #expect(try database.query("SELECT @@port AS port").first?.int64("port") == Int64(cluster.port),
                "node 3 was refused, node 1 taken")
        #expect(database.node?.port == UInt32(cluster.port))
        #expect(try database.query("SELECT @@wsrep_sync_wait AS w").first?.int64("w") == 1, "read-your-writes set on connect")

        try root3.command("SET GLOBAL wsrep_desync = OFF")
        for _ in 0..<100 where try root3.query("SHOW GLOBAL STATUS LIKE 'wsrep_local_state'").first?[1] != Array("4".utf8) {
            usleep(50_000)
        }
        let again = DatabaseConnection(settings: try cluster.settings(nodes: [3, 1]), firstNode: 0)
        #expect(try again.query("SELECT @@port AS port").first?.int64("port") == Int64(cluster.port + 2), "back once Synced")
    }

    @Test func aConnectionWhoseNodeDropsItMovesToAnother() throws {
        let database = DatabaseConnection(settings: try cluster.settings(nodes: [2, 3]), firstNode: 0)
        let before = try #require(try database.query("SELECT CONNECTION_ID() AS id").first?.int64("id"))
        #expect(database.node?.port == UInt32(cluster.port + 1))
        try cluster.root(node: 2).command("KILL CONNECTION \(before)")
        // A read runs again on a new connection, which avoids the node that dropped it.
        #expect(try database.query("SELECT @@port AS port").first?.int64("port") == Int64(cluster.port + 2))
    }

    @Test func aWriteOnOneNodeIsReadAtOnceOnAnother() throws {
        let writer = try freshTable("galera_ryw")
        let reader = DatabaseConnection(settings: try cluster.settings(nodes: [2]))
        for id in 1...200 {
            try writer.execute("INSERT INTO galera_ryw (id, n) VALUES (?, ?)", [.int(Int64(id)), .int(Int64(id))])
            let seen = try reader.query("SELECT n FROM galera_ryw WHERE id = ?", [.int(Int64(id))])
            #expect(seen.first?.int64("n") == Int64(id), "write \(id) seen on node 2 right after node 1 acknowledged it")
        }
    }

    @Test func aCertificationConflictAtCommitRunsTheTransactionAgain() throws {
        let first = try freshTable("galera_conflict")
        try first.execute("INSERT INTO galera_conflict (id, n) VALUES (1, 0)")
        let second = DatabaseConnection(settings: try cluster.settings(nodes: [2]))
        // A read waits until its node has applied what the cluster committed
        // (wsrep_sync_wait), an UPDATE does not: without this read, node 2's
        // UPDATE could run before the row arrived, change nothing, and conflict with nothing.
        #expect(try second.query("SELECT n FROM galera_conflict WHERE id = 1").first?.int64("n") == 0)

        // Without the retry: node 2's write, committed while node 1's
        // transaction holds the same row, makes node 1's COMMIT fail (1213).
        #expect {
            try first.transaction {
                try first.execute("UPDATE galera_conflict SET n = n + 1 WHERE id = 1")
                try second.execute("UPDATE galera_conflict SET n = n + 10 WHERE id = 1")
            }
        } throws: { error in
            let code = (error as? CommitError)?.underlying.code ?? (error as? DatabaseError)?.code
            return code == .deadlock
        }

        // Node 1 has node 2's write before its next run (its own +1 was rolled back).
        #expect(try first.query("SELECT n FROM galera_conflict WHERE id = 1").first?.int64("n") == 10)

        var runs = 0
        try first.retryingTransaction {
            runs += 1
            try first.execute("UPDATE galera_conflict SET n = n + 1 WHERE id = 1")
            if runs == 1 { try second.execute("UPDATE galera_conflict SET n = n + 100 WHERE id = 1") }
        }
        #expect(runs == 2, "the conflict was met once, and the second run committed")
        #expect(try second.query("SELECT n FROM galera_conflict WHERE id = 1").first?.int64("n") == 111,
                "node 2's two writes and node 1's second run, none lost or doubled")

        var always = 0
        #expect(throws: (any Error).self, "a conflict every time ends after the bounded attempts") {
            try first.retryingTransaction {
                always += 1
                try first.execute("UPDATE galera_conflict SET n = n + 1 WHERE id = 1")
                try second.execute("UPDATE galera_conflict SET n = n + 1 WHERE id = 1")
            }
        }
        #expect(always == DatabaseConnection.transactionAttempts)
    }
}
