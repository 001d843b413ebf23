/// `notifications` (migration 009): each event once (`subject`, its
/// absent photo and comment stored as 0), a person's read newest first on
/// `recipient_id`.
public final class MariaDBNotificationStore: NotificationStore {
    let database: DatabaseConnection

    /// Notifications are read where they are written: a person who
    /// dismissed one must not see it again from a lagging replica.
    public init(database: DatabaseConnection) { self.database = database }

    private static func subject(_ event: NotificationEvent) -> [DatabaseValue] {
        [.int(event.photoID ?? 0), .bytes(Array(event.kind.rawValue.utf8)), .int(event.actor), .int(event.commentID ?? 0),
         .int(event.recipient)]
    }

    /// None for an actor whose account is gone (deleted while its like or
    /// comment was on its way): one statement, so an account's deletion,
    /// which removes the account's row before its notifications a second
    /// time, sees this one or keeps it out.
    public func record(_ event: NotificationEvent, created: Int64) throws -> Int64? {
        let result = try database.execute("""
            INSERT IGNORE INTO notifications (IdPhoto, kind, actor, IdComment, recipient, created) \
            SELECT ?, ?, ?, ?, ?, ? FROM login WHERE IdUser = ?
            """, Self.subject(event) + [.int(created), .int(event.actor)])
        return result.affectedRows == 1 ? Int64(result.insertID) : nil
    }

    public func withdraw(_ event: NotificationEvent) throws {
        try database.execute("""
            DELETE FROM notifications WHERE IdPhoto = ? AND kind = ? AND actor = ? AND IdComment = ? AND recipient = ?
            """, Self.subject(event))
    }

    public func withdrawMention(commentID: Int64) throws {
        try database.execute("DELETE FROM notifications WHERE IdComment = ? AND kind = 'mention'", [.int(commentID)])
    }

    public func withdrawAll(photoID: Int64) throws {
        guard photoID > 0 else { return } // 0 stands for "no photo"
        try database.execute("DELETE FROM notifications WHERE IdPhoto = ?", [.int(photoID)])
    }

    /// An index range on `recipient_id`; the kinds as one comma list, so
    /// that every choice of kinds is the same statement.
    static func pageSQL(order: String = "DESC") -> String {
        """
        SELECT STRAIGHT_JOIN n.id, n.kind, n.recipient, n.actor, l.username, n.IdPhoto, n.IdComment, c.text, n.created \
        FROM notifications n JOIN login l ON (l.IdUser = n.actor) LEFT JOIN comments c ON (c.IdComment = n.IdComment) \
        WHERE n.recipient = ? AND FIND_IN_SET(n.kind, ?) AND (? = 0 OR n.actor = ?) AND n.id > ? AND n.id < ? \
        ORDER BY n.id \(order) LIMIT ?
        """
    }

    public func notifications(for recipient: Int64, kinds: Set<NotificationKind>, actor: Int64?,
                              page: PageCursor) throws -> [NotificationRecord] {
        let kindList = NotificationKind.allCases.filter(kinds.contains).map(\.rawValue).joined(separator: ",")
        return page.newestFirst(try database.query(Self.pageSQL(order: page.sqlOrder),
                                                   [.int(recipient), .bytes(Array(kindList.utf8)), .int(actor ?? 0), .int(actor ?? 0)]
                                                       + page.sqlArguments)
            .compactMap(Self.record))
    }

    private static func record(_ row: Row) -> NotificationRecord? {
        guard let id = row.int64("id"), let kind = row["kind"].flatMap({ NotificationKind(rawValue: String(decoding: $0, as: UTF8.self)) }),
              let recipient = row.int64("recipient"), let actor = row.int64("actor"), let created = row.int64("created")
        else { return nil }
        let photoID = row.int64("IdPhoto").flatMap { $0 == 0 ? nil : $0 }
        let commentID = row.int64("IdComment").flatMap { $0 == 0 ? nil : $0 }
        return NotificationRecord(id: id, event: NotificationEvent(kind: kind, recipient: recipient, actor: actor, photoID: photoID,
                                                                   commentID: commentID),
                                  actorName: row["username"] ?? [], text: commentID == nil ? nil : row["text"], created: created)
    }

    public func dismiss(id: Int64, for recipient: Int64) throws -> Bool {
        try database.execute("DELETE FROM notifications WHERE id = ? AND recipient = ?", [.int(id), .int(recipient)]).affectedRows == 1
    }

    public func dismissAll(for recipient: Int64) throws -> Int {
        Int(try database.execute("DELETE FROM notifications WHERE recipient = ?", [.int(recipient)]).affectedRows)
    }

    public func forget(userID: Int64) throws {
        try database.execute("DELETE FROM notifications WHERE recipient = ? OR actor = ?", [.int(userID), .int(userID)])
    }

}
