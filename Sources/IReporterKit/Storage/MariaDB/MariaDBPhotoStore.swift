#if canImport(Glibc)
import Glibc
#endif

/// The original `photos` table, joined with `login` for the stream.
public final class MariaDBPhotoStore: PhotoStore {
    let database: DatabaseConnection
    /// The stream's and one photo's reads (a replica's, with `db_replicas`).
    let reads: any DatabaseReading
    /// The tables `keepRow` found missing and said so (of the two it is given).
    private var warnedMissingTables: Set<String> = []
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
        var found: [Int64: PhotoRecord] = [:]
        for group in IDList.groups(Array(ids)) {
            for record in try reads.query("\(Self.photoColumns) WHERE p.IdPhoto IN (\(IDList.marks(group.count)))",
                                          group.map { .int($0) }).compactMap(Self.record) {
                found[record.id] = record
            }
        }
        return found
    }

    static func record(_ row: Row) -> PhotoRecord? {
        guard let id = row.int64("IdPhoto"), let userID = row.int64("IdUser") else { return nil }
        return PhotoRecord(id: id, title: row["title"], userID: userID, username: row["username"])
    }

    public func add(userID: Int64, title: [UInt8], details: PhotoDetails?, secret: PhotoSecret?,
                    publish: (Int64, PhotoSecret?) throws -> Void, unpublish: (Int64) -> Void) throws -> Int64 {
        try HeldID.skipping("upload", "its row deleted outside the API, or set aside by repair") {
            try insert(userID: userID, title: title, details: details, secret: secret, publish: publish, unpublish: unpublish)
        }
    }

    private func insert(userID: Int64, title: [UInt8], details: PhotoDetails?, secret: PhotoSecret?,
                        publish: (Int64, PhotoSecret?) throws -> Void, unpublish: (Int64) -> Void) throws -> Int64 {
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
                // Only while the account is there, asked after the row is in (`AccountRow`).
                // (An INSERT ... SELECT into the MyISAM `photos` of the PHP era costs
                // ~230 µs of MariaDB's CPU: 40 plain ones.)
                do {
                    try AccountRow.lock(database, userID: userID)
                } catch PhotoStoreError.accountRemoved {
                    try? delete(id: id) // MyISAM ignores the rollback
                    throw PhotoStoreError.accountRemoved
                }
                func unlessHeld<T>(in table: String, _ body: () throws -> T) throws -> T {
                    do {
                        return try body()
                    } catch let error as DatabaseError where error.code == .duplicateKey {
                        try? delete(id: id) // MyISAM ignores the rollback
                        throw HeldID(column: "IdPhoto", id: id, table: table)
                    }
                }
                if let details { try unlessHeld(in: "photo_details") { try keep(details, of: id) } }
                let keptSecret = try unlessHeld(in: "photo_secrets") { try secret.flatMap { try keep($0, of: id) ? $0 : nil } }
                do {
                    try searchIndex.add(photoID: id, userID: userID, title: title)
                    published = true
                    try publish(id, keptSecret)
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

    /// Keeps a new photo's details (migration 003), in its row's transaction.
    private func keep(_ details: PhotoDetails, of id: Int64) throws {
        try keepRow(in: "photo_details", "INSERT INTO photo_details (IdPhoto, created, width, height) VALUES (?, ?, ?, ?)",
                    [.int(id), .int(details.created), .int(Int64(details.width)), .int(Int64(details.height))],
                    missing: "photos are stored without their details until "
                        + "sql/migrations/003-photo-details-comments-votes.sql is applied (README, \"Migrations\")")
    }

    /// Keeps a new photo's secret (migration 006), in its row's transaction.
    private func keep(_ secret: PhotoSecret, of id: Int64) throws -> Bool {
        try keepRow(in: "photo_secrets", "INSERT INTO photo_secrets (IdPhoto, secret) VALUES (?, ?)",
                    [.int(id), .bytes(Array(secret.description.utf8))],
                    missing: "photos are stored without a secret (no size URLs) until "
                        + "sql/migrations/006-photo-secrets.sql is applied (README, \"Migrations\")")
    }

    /// Inserts a new photo's row into a migration's `table`; a database
    /// without the table goes on without it (false), said once per table in
    /// the log (`missing`: what that means until the migration is applied).
    @discardableResult
    private func keepRow(in table: String, _ sql: String, _ parameters: [DatabaseValue], missing: String) throws -> Bool {
        let kept = try database.ifTableExists(table) { try database.execute(sql, parameters) } != nil
        if !kept && warnedMissingTables.insert(table).inserted {
            Log.warning("\(table) is missing: \(missing)")
        }
        return kept
    }

    public func secret(of id: Int64) throws -> PhotoSecret? {
        let rows: [Row]
        do {
            // Joined: a row set aside keeps its secret, and its sizes must not be served meanwhile.
            rows = try database.query("SELECT s.secret FROM photo_secrets s JOIN photos p ON (p.IdPhoto = s.IdPhoto) WHERE s.IdPhoto = ?",
                                      [.int(id)])
        } catch where error.code == .noSuchTable {
            return nil
        }
        guard let text = rows.first?["secret"] else { return nil }
        return PhotoSecret(String(decoding: text, as: UTF8.self))
    }

    public func secrets(ids: Set<Int64>) throws -> [Int64: PhotoSecret] {
        guard !ids.isEmpty else { return [:] }
        do {
            var found = try storedSecrets(ids)
            let missing = ids.subtracting(found.keys)
            if !missing.isEmpty {
                // Photos the PHP version stored after migration 006: a
                // secret each now; INSERT IGNORE keeps another worker's.
                for id in try existing(missing.sorted()) {
                    try database.execute("INSERT IGNORE INTO photo_secrets (IdPhoto, secret) VALUES (?, ?)",
                                         [.int(id), .bytes(Array(PhotoSecret.random().description.utf8))])
                }
                found.merge(try storedSecrets(missing)) { first, _ in first }
            }
            return found
        } catch let error as DatabaseError where error.code == .noSuchTable {
            return [:]
        }
    }

    public func details(ids: Set<Int64>) throws -> [Int64: PhotoDetails] {
        var details: [Int64: PhotoDetails] = [:]
        for row in try detailRows(ids) {
            if let id = row.int64("IdPhoto"), let created = row.int64("created"), let width = row.int64("width"),
               let height = row.int64("height") {
                details[id] = PhotoDetails(created: created, width: Int(width), height: Int(height))
            }
        }
        return details
    }

    /// Three reads: the account with its photo count (migration 004's index
    /// on IdUser counts them), the first and last kept upload times (none
    /// before migration 003), and when it registered (none before 016).
    public func person(id: Int64) throws -> PersonRecord? {
        guard let account = try reads.query(
            "SELECT username, (SELECT COUNT(*) FROM photos WHERE IdUser = ?) AS photoCount FROM login WHERE IdUser = ? LIMIT 1",
            [.int(id), .int(id)]).first, let username = account["username"] else { return nil }
        let uploads = try uploadTimes(userID: id)
        return PersonRecord(id: id, username: username, photoCount: account.int64("photoCount") ?? 0,
                            firstUpload: uploads?.int64("firstUpload"), lastUpload: uploads?.int64("lastUpload"),
                            registered: try registered(userID: id))
    }

    /// When the account registered; nil before migration 016, or for an account registered before it.
    private func registered(userID: Int64) throws(DatabaseError) -> Int64? {
        do {
            return try reads.query("SELECT registered FROM login_registered WHERE IdUser = ?", [.int(userID)]).first?.int64("registered")
        } catch where error.code == .noSuchTable {
            return nil
        }
    }

    private func uploadTimes(userID: Int64) throws(DatabaseError) -> Row? {
        do {
            return try reads.query("SELECT MIN(d.created) AS firstUpload, MAX(d.created) AS lastUpload FROM photos p "
                                   + "JOIN photo_details d ON (d.IdPhoto = p.IdPhoto) WHERE p.IdUser = ?", [.int(userID)]).first
        } catch where error.code == .noSuchTable {
            return nil
        }
    }

    /// The `photo_details` rows of `ids`; none before migration 003.
    private func detailRows(_ ids: Set<Int64>) throws(DatabaseError) -> [Row] {
        do {
            var rows: [Row] = []
            for group in IDList.groups(Array(ids)) {
                rows += try database.query("SELECT IdPhoto, created, width, height FROM photo_details WHERE IdPhoto IN "
                                               + "(\(IDList.marks(group.count)))", group.map { .int($0) })
            }
            return rows
        } catch where error.code == .noSuchTable {
            return []
        }
    }

    private func storedSecrets(_ ids: Set<Int64>) throws(DatabaseError) -> [Int64: PhotoSecret] {
        var secrets: [Int64: PhotoSecret] = [:]
        for group in IDList.groups(Array(ids)) {
            for row in try database.query("SELECT IdPhoto, secret FROM photo_secrets WHERE IdPhoto IN (\(IDList.marks(group.count)))",
                                          group.map { .int($0) }) {
                if let id = row.int64("IdPhoto"), let secret = row["secret"].flatMap({ PhotoSecret(String(decoding: $0, as: UTF8.self)) }) {
                    secrets[id] = secret
                }
            }
        }
        return secrets
    }

    /// Whether the row exists, asked until the database answers or the time
    /// is up (nil: still unreachable). Real time: it sleeps between tries.
    private func existsOnceReachable(id: Int64, withinMillis: Int64) -> Bool? {
        let clock = MonotonicClock()
        let deadline = clock.now.advanced(byMillis: withinMillis)
        while true {
            if let rows = try? database.query("SELECT 1 FROM photos WHERE IdPhoto = ?", [.int(id)]) { return !rows.isEmpty }
            if clock.now >= deadline { return nil }
            usleep(250_000)
        }
    }

    public func ids(after id: Int64, limit: Int) throws -> [Int64] {
        try database.query("SELECT IdPhoto FROM photos WHERE IdPhoto > ? ORDER BY IdPhoto LIMIT \(limit)", [.int(id)])
            .compactMap { $0.int64("IdPhoto") }
    }

    public func existing(_ ids: [Int64]) throws -> Set<Int64> {
        var found = Set<Int64>()
        for group in IDList.groups(ids) {
            found.formUnion(try database.query("SELECT IdPhoto FROM photos WHERE IdPhoto IN (\(IDList.marks(group.count)))",
                                               group.map { .int($0) }).compactMap { $0.int64("IdPhoto") })
        }
        return found
    }

    /// Copied to `photos_removed` (made the first time), then deleted: the
    /// copy comes first, so that a crash between the two loses nothing.
    /// With a secret (one given now if it had none, as a PHP-era photo):
    /// an upload handed its id again skips an id whose secret is kept
    /// (`HeldID`), where it would take over the likes and comments that
    /// wait here for the row's restore.
    public func setAside(id: Int64, reason: String) throws {
        try database.command(Self.removedTable)
        _ = try secrets(ids: [id])
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
