/// `media_attachments` and `photo_descriptions` (sql/migrations/011),
/// `status_idempotency` (012).
public final class MariaDBMediaStore: MediaStore {
    let database: DatabaseConnection

    public init(database: DatabaseConnection) { self.database = database }

    private static let columns = "SELECT IdMedia, IdUser, file, width, height, description, focus, created FROM media_attachments"

    /// Counted after the row is committed: of uploads arriving together, the
    /// last to commit sees every row kept before it, so no more than `limit`
    /// stay (a lock or a conditional INSERT would make them deadlock instead).
    /// Whether the account is there is asked in the same read, after the row
    /// is in: an account's deletion removes its media again once its row is
    /// gone, and finds any committed before.
    public func addPending(_ media: PendingMedia, limit: Int) throws -> Int64? {
        let id = Int64(try database.execute(
            "INSERT INTO media_attachments (IdUser, file, width, height, description, focus, created) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [.int(media.userID), .bytes(Array(media.file.utf8)), .int(Int64(media.width)), .int(Int64(media.height)),
             .bytes(media.description ?? []), Self.focus(media.focusX, media.focusY), .int(media.created)]).insertID)
        let counted: Row?
        do {
            counted = try database.query("SELECT COUNT(*) AS n, EXISTS (SELECT 1 FROM login WHERE IdUser = ?) AS account "
                                         + "FROM media_attachments WHERE IdUser = ?", [.int(media.userID), .int(media.userID)]).first
        } catch {
            try? removePending(id: id) // its file goes with the caller's error
            throw error
        }
        guard counted?.int64("account") == 1 else {
            try removePending(id: id)
            throw PhotoStoreError.accountRemoved
        }
        guard counted?.int64("n") ?? 0 > limit else { return id }
        try removePending(id: id)
        return nil
    }

    public func pending(id: Int64) throws -> PendingMedia? {
        guard PhotoCountsRow.isStorable(id) else { return nil }
        return try database.query("\(Self.columns) WHERE IdMedia = ?", [.int(id)]).first.flatMap(Self.media)
    }

    public func pendingCount(userID: Int64) throws -> Int {
        Int(try database.query("SELECT COUNT(*) AS n FROM media_attachments WHERE IdUser = ?", [.int(userID)]).first?.int64("n") ?? 0)
    }

    public func pending(ofUser userID: Int64) throws -> [PendingMedia] {
        try database.query("\(Self.columns) WHERE IdUser = ? ORDER BY IdMedia", [.int(userID)]).compactMap(Self.media)
    }

    public func updatePending(id: Int64, userID: Int64, description: [UInt8]?, focusX: Double?, focusY: Double?) throws {
        guard PhotoCountsRow.isStorable(id) else { return }
        try database.execute("UPDATE media_attachments SET description = ?, focus = ? WHERE IdMedia = ? AND IdUser = ?",
                             [.bytes(description ?? []), Self.focus(focusX, focusY), .int(id), .int(userID)])
    }

    public func removePending(id: Int64) throws {
        try database.execute("DELETE FROM media_attachments WHERE IdMedia = ?", [.int(id)])
    }

    public func pendingCreated(before time: Int64, limit: Int) throws -> [PendingMedia] {
        try database.query("\(Self.columns) WHERE created < ? ORDER BY IdMedia LIMIT ?", [.int(time), .int(Int64(limit))])
            .compactMap(Self.media)
    }

    public func descriptions(ofPhotos ids: [Int64]) throws -> [Int64: [UInt8]] {
        do {
            return try storedDescriptions(ids)
        } catch let error as DatabaseError where error.code == .noSuchTable {
            // Before migration 011 (`stream`'s extras read them for every newest page): none.
            return [:]
        }
    }

    private func storedDescriptions(_ ids: [Int64]) throws -> [Int64: [UInt8]] {
        var found: [Int64: [UInt8]] = [:]
        for group in IDList.groups(ids.filter(PhotoCountsRow.isStorable)) {
            for row in try database.query("SELECT IdPhoto, description FROM photo_descriptions WHERE IdPhoto IN (\(IDList.marks(group.count)))",
                                          group.map { .int($0) }) {
                if let id = row.int64("IdPhoto"), let description = row["description"] { found[id] = description }
            }
        }
        return found
    }

    /// Kept only while the photo is there, asked after it is written: a
    /// photo deleted meanwhile leaves no description for its id.
    public func setDescription(_ description: [UInt8]?, ofPhoto id: Int64) throws {
        guard let description, !description.isEmpty else {
            try database.execute("DELETE FROM photo_descriptions WHERE IdPhoto = ?", [.int(id)])
            return
        }
        try database.execute("INSERT INTO photo_descriptions (IdPhoto, description) VALUES (?, ?) "
                             + "ON DUPLICATE KEY UPDATE description = VALUES(description)", [.int(id), .bytes(description)])
        if try database.query("SELECT 1 FROM photos WHERE IdPhoto = ?", [.int(id)]).isEmpty {
            try database.execute("DELETE FROM photo_descriptions WHERE IdPhoto = ?", [.int(id)])
        }
    }

    // Before migration 012 keys are not kept: a post is posted, as before.
    private static let idempotencyTable = "status_idempotency"

    /// The primary key (IdUser, key_hash) decides between two requests at once: one INSERT goes in.
    public func claimPost(userID: Int64, keyHash: String, since: Int64, abandonedBefore: Int64, at time: Int64) throws -> PostClaim {
        let key: [DatabaseValue] = [.int(userID), .bytes(Array(keyHash.utf8))]
        return try database.ifTableExists(Self.idempotencyTable) {
            try database.execute("DELETE FROM status_idempotency WHERE IdUser = ? AND key_hash = ? "
                                 + "AND (created < ? OR (status_id = 0 AND created < ?))", key + [.int(since), .int(abandonedBefore)])
            if try database.execute("INSERT IGNORE INTO status_idempotency (IdUser, key_hash, status_id, created) VALUES (?, ?, 0, ?)",
                                    key + [.int(time)]).affectedRows == 1 { return .claimed }
            let posted = try database.query("SELECT status_id FROM status_idempotency WHERE IdUser = ? AND key_hash = ?", key)
                .first?.int64("status_id") ?? 0
            return posted > 0 ? .posted(posted) : .underWay
        } ?? .notKept
    }

    public func releasePost(userID: Int64, keyHash: String) throws {
        try database.ifTableExists(Self.idempotencyTable) {
            try database.execute("DELETE FROM status_idempotency WHERE IdUser = ? AND key_hash = ? AND status_id = 0",
                                 [.int(userID), .bytes(Array(keyHash.utf8))])
        }
    }

    public func rememberPost(userID: Int64, keyHash: String, statusID: Int64, at time: Int64) throws {
        try database.ifTableExists(Self.idempotencyTable) {
            try database.execute("INSERT INTO status_idempotency (IdUser, key_hash, status_id, created) VALUES (?, ?, ?, ?) "
                                 + "ON DUPLICATE KEY UPDATE status_id = VALUES(status_id), created = VALUES(created)",
                                 [.int(userID), .bytes(Array(keyHash.utf8)), .int(statusID), .int(time)])
        }
    }

    public func forgetPosts(before time: Int64) throws {
        try database.ifTableExists(Self.idempotencyTable) {
            try database.execute("DELETE FROM status_idempotency WHERE created < ? LIMIT 500", [.int(time)])
        }
    }

    public func forgetPosts(ofUser userID: Int64) throws {
        try database.ifTableExists(Self.idempotencyTable) {
            try database.execute("DELETE FROM status_idempotency WHERE IdUser = ?", [.int(userID)])
        }
    }

    /// `x,y`, or empty for none.
    private static func focus(_ x: Double?, _ y: Double?) -> DatabaseValue {
        guard let x, let y else { return .bytes([]) }
        return .bytes(Array("\(x),\(y)".utf8))
    }

    private static func media(_ row: Row) -> PendingMedia? {
        guard let id = row.int64("IdMedia"), let userID = row.int64("IdUser"), let file = row["file"], let width = row.int64("width"),
              let height = row.int64("height"), let created = row.int64("created") else { return nil }
        let focus = String(decoding: row["focus"] ?? [], as: UTF8.self).split(separator: ",").compactMap { Double($0) }
        let description = row["description"].flatMap { $0.isEmpty ? nil : $0 }
        return PendingMedia(id: id, userID: userID, file: String(decoding: file, as: UTF8.self), width: Int(width), height: Int(height),
                            description: description, focusX: focus.count == 2 ? focus[0] : nil,
                            focusY: focus.count == 2 ? focus[1] : nil, created: created)
    }
}
