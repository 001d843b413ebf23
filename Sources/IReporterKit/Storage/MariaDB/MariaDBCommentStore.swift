/// `comments`, with the photo's comment count in `photo_counts` changed in
/// the same transaction.
public final class MariaDBCommentStore: CommentStore {
    let database: DatabaseConnection
    /// The comment pages' reads (a replica's, with `db_replicas`).
    let reads: any DatabaseReading

    public init(database: DatabaseConnection, reads: (any DatabaseReading)? = nil) {
        self.database = database
        self.reads = reads ?? database
    }

    private static let columns = """
        SELECT c.IdComment, c.IdPhoto, c.IdUser, l.username, c.text, c.created \
        FROM comments c LEFT JOIN login l ON (l.IdUser = c.IdUser)
        """

    public func addComment(photoID: Int64, userID: Int64, text: [UInt8], created: Int64) throws -> CommentRecord? {
        do {
            let id = try database.retryingTransaction {
                guard try PhotoCountsRow.lock(database, photoID: photoID) != nil else { throw PhotoCountsRow.NoSuchPhoto() }
                let id = try database.execute("INSERT INTO comments (IdPhoto, IdUser, text, created) VALUES (?, ?, ?, ?)",
                                              [.int(photoID), .int(userID), .bytes(text), .int(created)]).insertID
                try AccountRow.lock(database, userID: userID)
                try database.execute("UPDATE photo_counts SET comments = comments + 1 WHERE IdPhoto = ?", [.int(photoID)])
                return Int64(id)
            }
            return try database.query("\(Self.columns) WHERE c.IdComment = ?", [.int(id)]).first.flatMap(Self.record)
        } catch is PhotoCountsRow.NoSuchPhoto {
            return nil
        }
    }

    /// An index range on `IdPhoto_IdComment`.
    static func pageSQL(order: String = "DESC") -> String {
        "\(columns) WHERE c.IdPhoto = ? AND c.IdComment > ? AND c.IdComment < ? ORDER BY c.IdComment \(order) LIMIT ?"
    }

    public func comments(photoID: Int64, page: PageCursor) throws -> [CommentRecord] {
        page.newestFirst(try reads.query(Self.pageSQL(order: page.sqlOrder), [.int(photoID)] + page.sqlArguments)
            .compactMap(Self.record))
    }

    public func comment(id: Int64) throws -> CommentRecord? {
        guard PhotoCountsRow.isStorable(id) else { return nil }
        return try reads.query("\(Self.columns) WHERE c.IdComment = ?", [.int(id)]).first.flatMap(Self.record)
    }

    /// A range of migration 013's `IdUser_IdComment`; without it, the
    /// primary key backwards: all the pages together read the table once.
    static func byUserSQL(order: String = "DESC") -> String {
        "\(columns) WHERE c.IdUser = ? AND c.IdComment > ? AND c.IdComment < ? ORDER BY c.IdComment \(order) LIMIT ?"
    }

    public func comments(byUser userID: Int64, page: PageCursor) throws -> [CommentRecord] {
        page.newestFirst(try database.query(Self.byUserSQL(order: page.sqlOrder), [.int(userID)] + page.sqlArguments)
            .compactMap(Self.record))
    }

    public func removeComment(id: Int64, by userID: Int64) throws -> CommentRemoval {
        guard PhotoCountsRow.isStorable(id),
              let photoID = try database.query("SELECT IdPhoto FROM comments WHERE IdComment = ?", [.int(id)])
                .first?.int64("IdPhoto") else { return .notFound }
        struct Refused: Error { let outcome: CommentRemoval }
        do {
            try database.retryingTransaction {
                // A comment on a deleted photo is repair's to clear.
                guard let owner = try PhotoCountsRow.lock(database, photoID: photoID),
                      let author = try database.query("SELECT IdUser FROM comments WHERE IdComment = ? FOR UPDATE", [.int(id)])
                        .first?.int64("IdUser") else { throw Refused(outcome: .notFound) }
                guard author == userID || owner == userID else { throw Refused(outcome: .notAllowed) }
                try database.execute("DELETE FROM comments WHERE IdComment = ?", [.int(id)])
                try database.execute("UPDATE photo_counts SET comments = comments - 1 WHERE IdPhoto = ? AND comments > 0",
                                     [.int(photoID)])
            }
            return .removed
        } catch let refused as Refused {
            return refused.outcome
        }
    }

    private static func record(_ row: Row) -> CommentRecord? {
        guard let id = row.int64("IdComment"), let photoID = row.int64("IdPhoto"), let userID = row.int64("IdUser"),
              let created = row.int64("created") else { return nil }
        return CommentRecord(id: id, photoID: photoID, userID: userID, username: row["username"], text: row["text"] ?? [],
                             created: created)
    }
}
