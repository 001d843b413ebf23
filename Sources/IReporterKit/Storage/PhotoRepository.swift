#if canImport(Glibc)
import Glibc
#endif

/// The original `photos` table joined with `login` for the stream.
public struct PhotoRepository {
    public static let maxTitleBytes = 100
    /// How many photos the stream shows, newest first (the original's LIMIT).
    public static let streamLength = 50

    let database: DatabaseConnection

    public init(database: DatabaseConnection) { self.database = database }

    /// Rows of `IdPhoto, title, IdUser, username`, newest first.
    public func stream() throws(DatabaseError) -> [Row] {
        try database.query("""
            SELECT IdPhoto, title, l.IdUser, username FROM photos p JOIN login l ON (l.IdUser = p.IdUser) \
            ORDER BY IdPhoto DESC LIMIT \(Self.streamLength)
            """)
    }

    public func photo(id: Int64) throws(DatabaseError) -> [Row] {
        try database.query("""
            SELECT IdPhoto, title, l.IdUser, username FROM photos p JOIN login l ON (l.IdUser = p.IdUser) \
            WHERE p.IdPhoto = ? LIMIT 1
            """, [.int(id)])
    }

    /// Inserts the row and returns its new `IdPhoto`.
    public func insert(userID: Int64, title: [UInt8]) throws(DatabaseError) -> Int64 {
        Int64(try database.execute("INSERT INTO photos (IdUser, title) VALUES (?, ?)", [.int(userID), .bytes(title)]).insertID)
    }

    public func exists(id: Int64) throws(DatabaseError) -> Bool {
        !(try database.query("SELECT 1 FROM photos WHERE IdPhoto = ?", [.int(id)])).isEmpty
    }

    /// Whether the row exists, asked until the database answers or the time
    /// is up (nil: still unreachable).
    public func existsOnceReachable(id: Int64, withinMillis: Int64) -> Bool? {
        let deadline = monotonicMillis() + withinMillis
        while true {
            if let answer = try? exists(id: id) { return answer }
            if monotonicMillis() >= deadline { return nil }
            usleep(250_000)
        }
    }

    public func allIDs() throws(DatabaseError) -> [Int64] {
        try database.query("SELECT IdPhoto FROM photos").compactMap { $0[0].flatMap { Int64(String(decoding: $0, as: UTF8.self)) } }
    }

    public func delete(id: Int64) throws(DatabaseError) {
        try database.execute("DELETE FROM photos WHERE IdPhoto = ?", [.int(id)])
    }

    public func beginTransaction() throws(DatabaseError) { try database.command("START TRANSACTION", repeatable: true) }
    public func commit() throws(DatabaseError) { try database.command("COMMIT") }
    public func rollback() { try? database.command("ROLLBACK") }
}
