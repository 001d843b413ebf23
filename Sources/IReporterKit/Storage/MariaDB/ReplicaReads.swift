/// The stores' plain reads (the stream, one photo, search, comments) served
/// by a GTID replica of the primary (`db_replicas`); writes, and reads
/// inside write transactions, stay on the primary's connection.
///
/// Read-your-writes: when a request wrote, the primary's `@@last_gtid` is
/// remembered for its signed-in user (`WritePositions`, seen by every
/// worker and host). The first replica read of that user's next request
/// runs `MASTER_GTID_WAIT(position, timeout)` on the replica and reads the
/// primary instead when the replica has not applied the write in time.
/// A request without a signed-in user reads the replica without waiting,
/// and a request that wrote reads the primary from then on. A replica that
/// fails is left alone for `avoidMillis`: its reads go to the primary.
public final class ReplicaReads: DatabaseReading, ReadYourWrites {
    static let avoidMillis: Int64 = 5000

    public enum Source: Equatable, Sendable { case primary, replica }

    let primary: DatabaseConnection
    let replica: DatabaseConnection
    let positions: any WritePositions
    /// MASTER_GTID_WAIT's timeout, as SQL (seconds).
    private let waitSeconds: String

    private var reader: () -> Int64? = { nil }
    private var readerID: Int64??
    private var writesAtStart = 0
    /// Where this request's plain reads go, once its first one decided.
    private var useReplica: Bool?
    private var replicaAvoidedUntil = Instant(millis: .min)
    private let clock: any TimeSource
    /// Where the last read went (tests, the bench).
    public private(set) var lastSource: Source?

    /// A failed replica's `avoidMillis` are read on `clock`.
    public init(primary: DatabaseConnection, replica: DatabaseConnection, positions: any WritePositions, waitMillis: Int,
                clock: any TimeSource = MonotonicClock()) {
        self.primary = primary
        self.clock = clock
        self.replica = replica
        self.positions = positions
        waitSeconds = "\(Double(waitMillis) / 1000)"
    }

    public func beginRequest(reader: @escaping () -> Int64?) {
        self.reader = reader
        readerID = nil
        useReplica = nil
        writesAtStart = primary.writes
    }

    /// Remembers the position of the request's writes for its user.
    public func endRequest() {
        defer { beginRequest(reader: { nil }) }
        guard primary.writes != writesAtStart, let user = signedInUser() else { return }
        do {
            // A connection made again since the write has no @@last_gtid: the
            // server's whole position then, past the write (a wait a little longer).
            let row = try primary.query("SELECT @@last_gtid AS gtid, @@gtid_binlog_pos AS server", []).first
            guard let position = [row?["gtid"], row?["server"]].compactMap({ $0 }).first(where: { !$0.isEmpty }) else {
                Log.warning("read-your-writes: user \(user)'s write has no GTID position (binary log off?): a replica may show them an older state")
                return
            }
            try positions.remember(String(decoding: position, as: UTF8.self), of: user)
        } catch {
            Log.error("read-your-writes: user \(user)'s write position is not remembered (\(error)): a replica may show them an older state")
        }
    }

    public func query(_ sql: String, _ parameters: [DatabaseValue]) throws(DatabaseError) -> [Row] {
        if primary.writes == writesAtStart && replicaFits() {
            do {
                let rows = try replica.query(sql, parameters)
                lastSource = .replica
                return rows
            } catch {
                avoidReplica(error)
            }
        }
        lastSource = .primary
        return try primary.query(sql, parameters)
    }

    private func signedInUser() -> Int64? {
        if let readerID { return readerID }
        let user = reader()
        readerID = .some(user)
        return user
    }

    private func replicaFits() -> Bool {
        if let useReplica { return useReplica }
        let fits = replicaHasReadersWrites()
        useReplica = fits
        return fits
    }

    private func replicaHasReadersWrites() -> Bool {
        guard clock.now >= replicaAvoidedUntil else { return false }
        guard let user = signedInUser() else { return true }
        let position: String?
        do {
            position = try positions.position(of: user)
        } catch {
            Log.warning("read-your-writes: user \(user)'s write position cannot be read (\(error)): reading from the primary")
            return false
        }
        guard let position, !position.isEmpty else { return true }
        do {
            // 0: applied; -1: not within the timeout; NULL: an error.
            let waited = try replica.query("SELECT MASTER_GTID_WAIT(?, \(waitSeconds)) AS waited", [.bytes(Array(position.utf8))])
            if waited.first?.int64("waited") == 0 { return true }
            Log.info("replica has not applied \(position) within \(waitSeconds) s: user \(user) reads from the primary")
            return false
        } catch {
            avoidReplica(error)
            return false
        }
    }

    private func avoidReplica(_ error: DatabaseError) {
        Log.warning("database replica failed, reads go to the primary for \(Self.avoidMillis / 1000) s: \(error)")
        replicaAvoidedUntil = clock.now.advanced(byMillis: Self.avoidMillis)
        useReplica = false
        replica.disconnect()
    }
}
