/// The stream's pages: an index range on `photos` (the primary key, or
/// `IdUser_IdPhoto` of migration 004 for one person's photos), joined with
/// the account; with extras, each photo's counts, details and the viewer's
/// vote joined in the same query. STRAIGHT_JOIN keeps `photos` first, so
/// the plan is the index range whatever the tables' sizes.
extension MariaDBPhotoStore {
    private static let pageColumns = "SELECT STRAIGHT_JOIN p.IdPhoto, title, l.IdUser, username"
    private static let extraColumns = ", c.likes, c.dislikes, c.comments, d.created, d.width, d.height, v.vote AS myvote"
    private static let tables = " FROM photos p JOIN login l ON (l.IdUser = p.IdUser)"
    private static let extraTables = """
         LEFT JOIN photo_counts c ON (c.IdPhoto = p.IdPhoto) \
        LEFT JOIN photo_details d ON (d.IdPhoto = p.IdPhoto) \
        LEFT JOIN votes v ON (v.IdPhoto = p.IdPhoto AND v.IdUser = ?)
        """
    private static let range = " WHERE p.IdPhoto > ? AND p.IdPhoto < ?"
    private static let ofUser = " AND p.IdUser = ?"
    /// The page query; with extras its first parameter is the viewer.
    static func pageSQL(ofUser: Bool, withExtras: Bool, order: String = "DESC") -> String {
        pageColumns + (withExtras ? extraColumns : "") + tables + (withExtras ? extraTables : "") + range
            + (ofUser ? Self.ofUser : "") + " ORDER BY p.IdPhoto \(order) LIMIT ?"
    }

    public func photoIDs(ofUser userID: Int64, before: Int64, limit: Int) throws -> [Int64] {
        try database.query("SELECT IdPhoto FROM photos WHERE IdUser = ? AND IdPhoto < ? ORDER BY IdPhoto DESC LIMIT ?",
                           [.int(userID), .int(before), .int(Int64(limit))]).compactMap { $0.int64("IdPhoto") }
    }

    public func photos(in page: PageCursor, userID: Int64?) throws -> [PhotoRecord] {
        page.newestFirst(try reads.query(Self.pageSQL(ofUser: userID != nil, withExtras: false, order: page.sqlOrder),
                                         Self.arguments(page, userID)).compactMap(Self.record))
    }

    public func photosWithExtras(in page: PageCursor, userID: Int64?,
                                 viewer: Int64?) throws -> [(photo: PhotoRecord, extras: PhotoExtras)] {
        let sql = Self.pageSQL(ofUser: userID != nil, withExtras: true, order: page.sqlOrder)
        return page.newestFirst(try reads.query(sql, [.int(viewer ?? 0)] + Self.arguments(page, userID)).compactMap { row in
            Self.record(row).map { ($0, Self.extras(row)) }
        })
    }

    public func extras(of ids: [Int64], viewer: Int64?) throws -> [Int64: PhotoExtras] {
        var found: [Int64: PhotoExtras] = [:]
        for group in IDList.groups(ids) {
            let sql = "SELECT STRAIGHT_JOIN p.IdPhoto\(Self.extraColumns) FROM photos p\(Self.extraTables) "
                + "WHERE p.IdPhoto IN (\(IDList.marks(group.count)))"
            for row in try reads.query(sql, [.int(viewer ?? 0)] + group.map { .int($0) }) {
                if let id = row.int64("IdPhoto") { found[id] = Self.extras(row) }
            }
        }
        return found
    }

    private static func extras(_ row: Row) -> PhotoExtras {
        var details: PhotoDetails?
        if let created = row.int64("created"), let width = row.int64("width"), let height = row.int64("height") {
            details = PhotoDetails(created: created, width: Int(width), height: Int(height))
        }
        return PhotoExtras(likes: row.int64("likes") ?? 0, dislikes: row.int64("dislikes") ?? 0,
                           comments: row.int64("comments") ?? 0,
                           myVote: row.int64("myvote").flatMap(Vote.init(rawValue:)), details: details)
    }

    private static func arguments(_ page: PageCursor, _ userID: Int64?) -> [DatabaseValue] {
        [.int(page.since), .int(page.before)] + (userID.map { [.int($0)] } ?? []) + [.int(Int64(page.count))]
    }
}
