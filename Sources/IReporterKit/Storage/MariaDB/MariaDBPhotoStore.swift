#if canImport(Glibc)
import Glibc
#endif

/// The original `photos` table, joined with `login` for the stream.
public final class MariaDBPhotoStore: PhotoStore {
    let database: DatabaseConnection
    private let searchIndex: MariaDBSearchIndex

    public init(database: DatabaseConnection) {
        self.database = database
        searchIndex = MariaDBSearchIndex(database: database)
    }

    private static let photoColumns = "SELECT IdPhoto, title, l.IdUser, username FROM photos p JOIN login l ON (l.IdUser = p.IdUser)"

    public func newest(limit: Int) throws -> [PhotoRecord] {
        try database.query("\(Self.photoColumns) ORDER BY IdPhoto DESC LIMIT \(limit)").compactMap(Self.record)
    }

    public func photo(id: Int64) throws -> PhotoRecord? {
        try database.query("\(Self.photoColumns) WHERE p.IdPhoto = ? LIMIT 1", [.int(id)]).first.flatMap(Self.record)
    }

    static func record(_ row: Row) -> PhotoRecord? {
        guard let id = row.int64("IdPhoto"), let userID = row.int64("IdUser") else { return nil }
        return PhotoRecord(id: id, title: row["title"], userID: userID, username: row["username"])
    }

    public func add(userID: Int64, title: [UInt8], publish: (Int64) throws -> Void,
                    unpublish: (Int64) -> Void) throws -> Int64 {
        var photoID: Int64?
        do {
            return try database.transaction {
                let id = Int64(try database.execute("INSERT INTO photos (IdUser, title) VALUES (?, ?)",
                                                    [.int(userID), .bytes(title)]).insertID)
                photoID = id
                do {
                    try searchIndex.add(photoID: id, userID: userID, title: title)
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

    public func allIDs() throws -> [Int64] {
        try database.query("SELECT IdPhoto FROM photos").compactMap { $0.int64("IdPhoto") }
    }

    public func delete(id: Int64) throws {
        try database.execute("DELETE FROM photos WHERE IdPhoto = ?", [.int(id)])
        try searchIndex.remove(photoID: id)
    }
}
