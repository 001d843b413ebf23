#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
@testable import IReporterKit

/// `ReplicaReads` on a real primary and GTID replica (`ReplicaTestPair`):
/// a user's read waits for the replica to apply their write, falls back to
/// the primary when it does not in time or the replica is down, and an
/// anonymous read is served by the replica as it stands.
@Suite(.serialized, .enabled(if: ReplicaTestPair.available, "needs root to start MariaDB: make test"))
struct ReplicaIntegrationTests {
    let pair = ReplicaTestPair.shared
    let positions = ScratchDirectory("replica-positions")

    /// A request of `user` (nil: anonymous), as the API runs one.
    private func request<T>(_ reads: ReplicaReads, as user: Int64?, _ body: () throws -> T) rethrows -> T {
        reads.beginRequest { user }
        defer { reads.endRequest() }
        return try body()
    }

    private func setUp(waitMillis: Int, clock: any TimeSource = MonotonicClock()) throws -> (ReplicaReads, MariaDBPhotoStore, user: Int64) {
        let primary = DatabaseConnection(settings: try pair.settings())
        let reads = ReplicaReads(primary: primary, replica: DatabaseConnection(settings: try pair.settings(replica: true)),
                                 positions: WritePositionFiles(directory: positions.path), waitMillis: waitMillis, clock: clock)
        let name = "replica-\(getpid())-\(monotonicMicros())"
        let user = Int64(try primary.execute("INSERT INTO login (username, pass) VALUES (?, 'x')", [.bytes(Array(name.utf8))]).insertID)
        return (reads, MariaDBPhotoStore(database: primary, reads: reads), user)
    }

    /// A photo row written by `user`'s request (a write on the primary).
    private func upload(_ reads: ReplicaReads, as user: Int64) throws -> Int64 {
        try request(reads, as: user) {
            Int64(try reads.primary.execute("INSERT INTO photos (IdUser, title) VALUES (?, 'replicated')", [.int(user)]).insertID)
        }
    }

    private func setDelay(seconds: Int) throws {
        let root = try pair.replicaRoot()
        try root.command("STOP SLAVE")
        try root.command("CHANGE MASTER TO MASTER_DELAY = \(seconds)")
        try root.command("START SLAVE")
    }

    /// A replica (or a lone primary) gone from the network acknowledges
    /// nothing: its connection is dropped after the connect timeout of
    /// unacknowledged data, as a cluster node's, not the 30 s read timeout.
    @Test func replicaAndPrimaryConnectionsDropUnacknowledgedDataAfterTheConnectTimeout() throws {
        for settings in [try pair.settings(replica: true), try pair.settings()] {
            let connection = DatabaseConnection(settings: settings)
            _ = try connection.query("SELECT 1")
            #expect(connection.unacknowledgedDataTimeoutMillis == settings.connectTimeoutSeconds * 1000)
        }
    }

    @Test func aWritersNextReadWaitsForTheReplicaAndSeesTheWrite() throws {
        // The delay counts from the write's whole second: 3 s is 2 at least
        // (1 could be nothing); the wait outlasts it.
        let (reads, photos, user) = try setUp(waitMillis: 8000)
        try setDelay(seconds: 3)
        defer { try? setDelay(seconds: 0) }
        for _ in 0..<2 {
            let id = try upload(reads, as: user)
            // Without the wait the replica answers as it stands: the photo is not there yet.
            #expect(try request(reads, as: nil) { try photos.photo(id: id) } == nil, "anonymous: the delayed replica, stale")
            #expect(reads.lastSource == .replica)
            // The same replica, still behind a moment ago, answers the writer with it: it waited.
            let seen = try request(reads, as: user) { try photos.photo(id: id) }
            #expect(seen?.id == id, "the writer sees their photo at once")
            #expect(reads.lastSource == .replica, "read from the replica, after MASTER_GTID_WAIT")
        }
    }

    @Test func aPausedReplicaSendsTheWritersReadToThePrimaryAfterTheWait() throws {
        let (reads, photos, user) = try setUp(waitMillis: 300)
        let root = try pair.replicaRoot()
        try root.command("STOP SLAVE SQL_THREAD")
        defer { _ = try? root.command("START SLAVE SQL_THREAD") }
        let id = try upload(reads, as: user)

        let started = monotonicMillis()
        #expect(try request(reads, as: user) { try photos.photo(id: id) }?.id == id, "never a stale answer for the writer")
        #expect(reads.lastSource == .primary)
        #expect(monotonicMillis() - started >= 300, "it waited db_replica_wait_ms first")

        #expect(try request(reads, as: nil) { try photos.photo(id: id) } == nil, "anonymous: served stale by the replica")
        #expect(reads.lastSource == .replica)

        try root.command("START SLAVE SQL_THREAD")
        var caughtUp = false
        for _ in 0..<100 where !caughtUp {
            caughtUp = try request(reads, as: user) { try photos.photo(id: id) } != nil && reads.lastSource == .replica
            if !caughtUp { usleep(50_000) }
        }
        #expect(caughtUp, "once replication runs again, the writer reads the replica")
    }

    @Test func aStoppedReplicaSendsReadsToThePrimaryUntilItIsTriedAgain() throws {
        let clock = ManualClock()
        let (reads, photos, user) = try setUp(waitMillis: 1000, clock: clock)
        let id = try upload(reads, as: user)
        #expect(try request(reads, as: user) { try photos.photo(id: id) }?.id == id)
        #expect(reads.lastSource == .replica)

        pair.stopReplica()
        defer { pair.start() }
        for reader in [user, nil] {
            #expect(try request(reads, as: reader) { try photos.photo(id: id) }?.id == id, "no error for a replica down")
            #expect(reads.lastSource == .primary)
        }
        // Left alone for a while: the next read does not try it again.
        let started = monotonicMillis()
        #expect(try request(reads, as: nil) { try photos.newest(limit: 50) }.contains { $0.id == id })
        #expect(reads.lastSource == .primary)
        #expect(monotonicMillis() - started < 1000)

        // Back, it is tried again once `avoidMillis` have passed on the clock.
        pair.start()
        clock.advance(byMillis: ReplicaReads.avoidMillis - 1)
        #expect(try request(reads, as: nil) { try photos.newest(limit: 50) }.contains { $0.id == id })
        #expect(reads.lastSource == .primary, "still left alone")
        clock.advance(byMillis: 1)
        _ = try request(reads, as: nil) { try photos.newest(limit: 50) }
        #expect(reads.lastSource == .replica)
    }

    @Test func aRequestThatWroteReadsThePrimaryAndRemembersItsPosition() throws {
        let (reads, photos, user) = try setUp(waitMillis: 1000)
        let root = try pair.replicaRoot()
        try root.command("STOP SLAVE SQL_THREAD")
        defer { _ = try? root.command("START SLAVE SQL_THREAD") }
        try request(reads, as: user) {
            let id = Int64(try reads.primary.execute("INSERT INTO photos (IdUser, title) VALUES (?, 'mine')", [.int(user)]).insertID)
            #expect(try photos.photo(id: id)?.id == id, "read after a write in the same request: the primary")
            #expect(reads.lastSource == .primary)
        }
        let remembered = try #require(try WritePositionFiles(directory: positions.path).position(of: user))
        let last = try reads.primary.query("SELECT @@gtid_binlog_pos AS p", []).first?["p"]
        #expect(Array(remembered.utf8) == last, "the position of the user's last write")
    }
}
