#if canImport(Glibc)
import Glibc
#endif

/// The original `photos` table, joined with `login` for the stream.
public final class MariaDBPhotoStore: PhotoStore {
    let database: DatabaseConnection
    /// The stream's and one photo's reads (a replica's, with `db_replicas`).
    let reads: any DatabaseReading
    private var warnedNoDetailsTable = false
    let searchIndex: MariaDBSearchIndex

    public init(database: DatabaseConnection, reads: (any DatabaseReading)? = nil) {
        self.database = database
        self.reads = reads ?? database
        searchIndex = MariaDBSearchIndex(database: database)
    }

    private static let photoColumns = "SELECT IdPhoto, title, l.IdUser, username FROM photos p JOIN login l ON (l.IdUser = p.IdUser)"

    /// The page query (`photos(in:userID:)`), whose plan is pinned: the
    /// original's text lets MariaDB start from `login` once `photos` has an
    /// index on IdUser (migration 004), which on a large table costs a scan
    /// and a sort of every photo.
    public func newest(limit: Int) throws -> [PhotoRecord] {
        try photos(in: PageCursor(since: .min, count: limit), userID: nil)
    }

    public func photo(id: Int64) throws -> PhotoRecord? {
        try reads.query("\(Self.photoColumns) WHERE p.IdPhoto = ? LIMIT 1", [.int(id)]).first.flatMap(Self.record)
    }

    public func photos(ids: Set<Int64>) throws -> [Int64: PhotoRecord] {
        guard !ids.isEmpty else { return [:] }
        let list = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        let found = try reads.query("\(Self.photoColumns) WHERE p.IdPhoto IN (\(list))", ids.map { .int($0) }).compactMap(Self.record)
        return Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    static func record(_ row: Row) -> PhotoRecord? {
        guard let id = row.int64("IdPhoto"), let userID = row.int64("IdUser") else { return nil }
        return PhotoRecord(id: id, title: row["title"], userID: userID, username: row["username"])
    }

    public func add(userID: Int64, title: [UInt8], details: PhotoDetails?, publish: (Int64) throws -> Void,
                    unpublish: (Int64) -> Void) throws -> Int64 {
        var photoID: Int64?
        do {
            // A run that failed before its files were moved in place (a node
            // gone) runs again; after, the files are the spool's only copy,
            // so a failure is answered as before (a new row never conflicts).
            var published = false
            return try database.retryingTransaction(canRetry: { !published }) {
                let id = Int64(try database.execute("INSERT INTO photos (IdUser, title) VALUES (?, ?)",
                                                    [.int(userID), .bytes(title)]).insertID)
                photoID = id
                if let details { try keep(details, of: id) }
                do {
                    try searchIndex.add(photoID: id, userID: userID, title: title)
                    published = true
                    try publish(id)
                } catch {
                    try? delete(id: id) // MyISAM ignores the rollback
                    throw error
                }
                return id
            }
        } catch let failure as CommitError {
            guard let id = photoID else { throw failure.underlying }
            guard failure.underlying.isConnectionLost else {
                unpublish(id)
                try? delete(id: id) // a MyISAM row outlives the failed commit
                throw failure.underlying
            }
            // The answer to COMMIT was lost, not necessarily the commit: ask
            // again, for a few seconds (a restarting server comes back).
            switch existsOnceReachable(id: id, withinMillis: 5000) {
            case true?:
                Log.warning("upload \(id): the connection broke after COMMIT, which had been applied")
                return id
            case false?:
                unpublish(id)
                throw failure.underlying
            case nil:
                // Unknowable now: the files stay. With no row they are debris
                // that the start-up sweep and `ireporter repair` remove; with
                // one, the photo is whole.
                Log.error("upload \(id): the database went away during COMMIT; files kept for repair to settle")
                throw failure.underlying
            }
        }
    }

    /// Keeps a new photo's details, in its row's transaction; a database
    /// without migration 003 goes on without them (said once in the log).
    private func keep(_ details: PhotoDetails, of id: Int64) throws {
        do {
            try database.execute("INSERT INTO photo_details (IdPhoto, created, width, height) VALUES (?, ?, ?, ?)",
                                 [.int(id), .int(details.created), .int(Int64(details.width)), .int(Int64(details.height))])
        } catch where error.code == .noSuchTable {
            if !warnedNoDetailsTable {
                Log.warning("photo_details is missing: photos are stored without their details until "
                            + "sql/migrations/003-photo-details-comments-votes.sql is applied (README, \"Migrations\")")
                warnedNoDetailsTable = true
            }
        }
    }

    /// Whether the row exists, asked until the database answers or the time
    /// is up (nil: still unreachable).
    private func existsOnceReachable(id: Int64, withinMillis: Int64) -> Bool? {
        let deadline = monotonicMillis() + withinMillis
        while true {
            if let rows = try? database.query("SELECT 1 FROM photos WHERE IdPhoto = ?", [.int(id)]) { return !rows.isEmpty }
            if monotonicMillis() >= deadline { return nil }
            usleep(250_000)
        }
    }

    public func ids(after id: Int64, limit: Int) throws -> [Int64] {
        try database.query("SELECT IdPhoto FROM photos WHERE IdPhoto > ? ORDER BY IdPhoto LIMIT \(limit)", [.int(id)])
            .compactMap { $0.int64("IdPhoto") }
    }

    public func existing(_ ids: [Int64]) throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        // Whole numbers only: safe to spell out in the statement.
        let list = ids.map(String.init).joined(separator: ",")
        return Set(try database.query("SELECT IdPhoto FROM photos WHERE IdPhoto IN (\(list))").compactMap { $0.int64("IdPhoto") })
    }

    /// Copied to `photos_removed` (made the first time), then deleted: the
    /// copy comes first, so that a crash between the two loses nothing.
    public func setAside(id: Int64, reason: String) throws {
        try database.command(Self.removedTable)
        try database.retryingTransaction {
            try database.execute("""
                REPLACE INTO photos_removed (IdPhoto, title, IdUser, removed_at, reason)
                SELECT IdPhoto, title, IdUser, NOW(), ? FROM photos WHERE IdPhoto = ?
                """, [.bytes(Array(reason.utf8)), .int(id)])
            try delete(id: id)
        }
    }

    /// The photos' columns, and when and why a row was set aside.
    static let removedTable = """
        CREATE TABLE IF NOT EXISTS photos_removed (
          IdPhoto int(11) NOT NULL, title varchar(100) CHARACTER SET latin1 NOT NULL, IdUser int(11) NOT NULL,
          removed_at datetime NOT NULL, reason varchar(255) NOT NULL, PRIMARY KEY (IdPhoto)
        ) DEFAULT CHARSET=utf8
        """

    func delete(id: Int64) throws {
        try database.execute("DELETE FROM photos WHERE IdPhoto = ?", [.int(id)])
        try searchIndex.remove(photoID: id)
    }
}
