/// `follows` (migration 009): the edges by id, read through either side's
/// index (`follower_id`, `followee_id`), each row joined with the other
/// account.
public final class MariaDBFollowStore: FollowStore {
    let database: DatabaseConnection
    /// The lists' and the feed's reads (a replica's, with `db_replicas`).
    let reads: any DatabaseReading

    public init(database: DatabaseConnection, reads: (any DatabaseReading)? = nil) {
        self.database = database
        self.reads = reads ?? database
    }

    public func follow(_ followee: Int64, by follower: Int64, created: Int64) throws -> Bool {
        try database.execute("INSERT IGNORE INTO follows (follower, followee, created) SELECT ?, ?, ? FROM login WHERE IdUser = ?",
                             [.int(follower), .int(followee), .int(created), .int(followee)]).affectedRows == 1
    }

    public func unfollow(_ followee: Int64, by follower: Int64) throws -> Bool {
        try database.execute("DELETE FROM follows WHERE follower = ? AND followee = ?",
                             [.int(follower), .int(followee)]).affectedRows == 1
    }

    /// One side's list: `side` is the column that names the person, the
    /// other column the accounts listed. The index is pinned: for a person
    /// with few edges MariaDB would read `follower_followee` and sort.
    static func listSQL(of side: String, showing other: String, order: String = "DESC") -> String {
        """
        SELECT STRAIGHT_JOIN f.id, l.IdUser, l.username FROM follows f FORCE INDEX (\(side)_id) \
        JOIN login l ON (l.IdUser = f.\(other)) \
        WHERE f.\(side) = ? AND f.id > ? AND f.id < ? ORDER BY f.id \(order) LIMIT ?
        """
    }

    public func followers(of userID: Int64, page: PageCursor) throws -> [FollowRecord] {
        try list(Self.listSQL(of: "followee", showing: "follower", order: page.sqlOrder), userID, page)
    }

    public func following(of userID: Int64, page: PageCursor) throws -> [FollowRecord] {
        try list(Self.listSQL(of: "follower", showing: "followee", order: page.sqlOrder), userID, page)
    }

    /// `viewer`'s edges on `follower_id`, newest first, each kept when its
    /// followee follows `userID` (one point of `follower_followee`).
    static let familiarSQL = """
        SELECT STRAIGHT_JOIN g.id, l.IdUser, l.username FROM follows g FORCE INDEX (follower_id) \
        JOIN follows f ON (f.follower = g.followee AND f.followee = ?) JOIN login l ON (l.IdUser = g.followee) \
        WHERE g.follower = ? ORDER BY g.id DESC LIMIT ?
        """

    public func familiarFollowers(of userID: Int64, viewer: Int64, limit: Int) throws -> [FollowRecord] {
        try reads.query(Self.familiarSQL, [.int(userID), .int(viewer), .int(Int64(limit))]).compactMap(Self.record)
    }

    private static func record(_ row: Row) -> FollowRecord? {
        guard let id = row.int64("id"), let userID = row.int64("IdUser") else { return nil }
        return FollowRecord(id: id, userID: userID, username: row["username"] ?? [])
    }

    private func list(_ sql: String, _ userID: Int64, _ page: PageCursor) throws -> [FollowRecord] {
        page.newestFirst(try reads.query(sql, [.int(userID)] + page.sqlArguments).compactMap(Self.record))
    }

    /// Index ranges on `followee_id`, `follower_id` and one point of `follower_followee`.
    public func counts(of userID: Int64, viewer: Int64?) throws -> FollowCounts {
        let row = try reads.query("""
            SELECT (SELECT COUNT(*) FROM follows WHERE followee = ?) AS followers, \
            (SELECT COUNT(*) FROM follows WHERE follower = ?) AS following, \
            (SELECT COUNT(*) FROM follows WHERE follower = ? AND followee = ?) AS followed
            """, [.int(userID), .int(userID), .int(viewer ?? 0), .int(userID)]).first
        return FollowCounts(followers: row?.int64("followers") ?? 0, following: row?.int64("following") ?? 0,
                            followedByViewer: viewer.map { _ in (row?.int64("followed") ?? 0) > 0 })
    }

    /// A range of `follower_followee`, on the primary: a replica behind
    /// would let a follow past the limit.
    public func followingCount(of userID: Int64) throws -> Int64 {
        try database.query("SELECT COUNT(*) AS following FROM follows WHERE follower = ?", [.int(userID)]).first?.int64("following") ?? 0
    }

    /// A point of `follower_followee`.
    public func isFollowing(_ follower: Int64, _ followee: Int64) throws -> Bool {
        !(try reads.query("SELECT 1 FROM follows WHERE follower = ? AND followee = ?", [.int(follower), .int(followee)]).isEmpty)
    }

    /// People one feed statement reads (one statement text whatever their
    /// number: a group is padded with IdUser 0, whose photos there are none).
    static let feedGroup = 32

    /// Each of `feedGroup` people's photos in the page's range, at most a
    /// page of each, on `IdUser_IdPhoto` (migration 004, ids only: the
    /// index covers them), the newest (or oldest, from `since`) of them all:
    /// a page reads at most a page a person. (One join of the people with
    /// their photos read every photo of theirs in the range: 400,400 index
    /// rows a page for 400 followed accounts of 1,000 photos, a review found.)
    static func feedSQL(order: String = "DESC") -> String {
        let one = "(SELECT IdPhoto FROM photos WHERE IdUser = ? AND IdPhoto > ? AND IdPhoto < ? ORDER BY IdPhoto \(order) LIMIT ?)"
        return "SELECT IdPhoto FROM (\(Array(repeating: one, count: feedGroup).joined(separator: " UNION ALL "))) people "
            + "ORDER BY IdPhoto \(order) LIMIT ?"
    }

    public func feed(of userID: Int64, page: PageCursor) throws -> [Int64] {
        let followed = try reads.query("SELECT followee FROM follows WHERE follower = ?", [.int(userID)]).compactMap { $0.int64("followee") }
        let people = Array(Set(followed + [userID])).sorted()
        let sql = Self.feedSQL(order: page.sqlOrder)
        var photos: [Int64] = []
        for start in stride(from: 0, to: people.count, by: Self.feedGroup) {
            let group = people[start..<min(start + Self.feedGroup, people.count)]
            let padded = Array(group) + Array(repeating: 0, count: Self.feedGroup - group.count)
            photos += try reads.query(sql,
                                      padded.flatMap { [.int($0)] + page.sqlArguments } + [.int(Int64(page.count))])
                .compactMap { $0.int64("IdPhoto") }
        }
        // The page of them all, as one statement would read it.
        let ordered = page.fromSince ? photos.sorted() : photos.sorted(by: >)
        return page.newestFirst(Array(ordered.prefix(page.count)))
    }

    public func forget(userID: Int64) throws {
        try database.execute("DELETE FROM follows WHERE follower = ? OR followee = ?", [.int(userID), .int(userID)])
    }
}
