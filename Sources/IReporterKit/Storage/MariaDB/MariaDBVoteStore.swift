/// `votes`, one row per person and photo, and the photo's counts in
/// `photo_counts`, changed in one transaction.
public final class MariaDBVoteStore: VoteStore {
    let database: DatabaseConnection

    public init(database: DatabaseConnection) { self.database = database }

    public func setVote(_ vote: Vote?, photoID: Int64, userID: Int64) throws -> (extras: PhotoExtras, changed: Bool)? {
        do {
            return try database.retryingTransaction {
                guard try PhotoCountsRow.lock(database, photoID: photoID) != nil else { throw PhotoCountsRow.NoSuchPhoto() }
                let old = try database.query("SELECT vote FROM votes WHERE IdPhoto = ? AND IdUser = ? FOR UPDATE",
                                             [.int(photoID), .int(userID)]).first?.int64("vote").flatMap(Vote.init(rawValue:))
                if old != vote {
                    if let vote {
                        try database.execute("""
                            INSERT INTO votes (IdPhoto, IdUser, vote) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE vote = VALUES(vote)
                            """, [.int(photoID), .int(userID), .int(vote.rawValue)])
                        try AccountRow.lock(database, userID: userID)
                    } else {
                        try database.execute("DELETE FROM votes WHERE IdPhoto = ? AND IdUser = ?", [.int(photoID), .int(userID)])
                    }
                    try database.execute("UPDATE photo_counts SET likes = likes + ?, dislikes = dislikes + ? WHERE IdPhoto = ?",
                                         [.int(Self.change(of: .like, from: old, to: vote)),
                                          .int(Self.change(of: .dislike, from: old, to: vote)), .int(photoID)])
                }
                let counts = try database.query("SELECT likes, dislikes, comments FROM photo_counts WHERE IdPhoto = ?",
                                                [.int(photoID)]).first
                return (PhotoExtras(likes: counts?.int64("likes") ?? 0, dislikes: counts?.int64("dislikes") ?? 0,
                                    comments: counts?.int64("comments") ?? 0, myVote: vote), old != vote)
            }
        } catch is PhotoCountsRow.NoSuchPhoto {
            return nil
        }
    }

    /// A range of the primary key (IdPhoto, IdUser).
    /// A range of the primary key (IdPhoto, IdUser).
    public func likers(of photoID: Int64, page: PageCursor) throws -> [(userID: Int64, username: [UInt8])] {
        guard PhotoCountsRow.isStorable(photoID) else { return [] }
        return page.newestFirst(try database.query(
            "SELECT v.IdUser, l.username FROM votes v JOIN login l ON (l.IdUser = v.IdUser) "
                + "WHERE v.IdPhoto = ? AND v.vote = 1 AND v.IdUser > ? AND v.IdUser < ? ORDER BY v.IdUser \(page.sqlOrder) LIMIT ?",
            [.int(photoID)] + page.sqlArguments)
            .compactMap { row in row.int64("IdUser").map { ($0, row["username"] ?? []) } })
    }

    /// Point lookups on the primary key (IdPhoto, IdUser).
    public func votes(by userID: Int64, on photoIDs: [Int64]) throws -> [Int64: Vote] {
        var mine: [Int64: Vote] = [:]
        for group in IDList.groups(photoIDs) {
            for row in try database.query("SELECT IdPhoto, vote FROM votes WHERE IdUser = ? AND IdPhoto IN (\(IDList.marks(group.count)))",
                                          [.int(userID)] + group.map { .int($0) }) {
                if let id = row.int64("IdPhoto"), let vote = row.int64("vote").flatMap(Vote.init(rawValue:)) { mine[id] = vote }
            }
        }
        return mine
    }

    /// Migration 013's index (IdUser, IdPhoto, vote).
    static let userIndex = "IdUser_IdPhoto_vote"

    /// A range of migration 013's index, read from the index alone, each
    /// vote's photo and account a point of their primary keys (a vote whose
    /// photo is gone takes no place in the page). The index is forced:
    /// without it MariaDB would read every vote (error 1176 instead).
    static func likedSQL(order: String = "DESC") -> String {
        "SELECT STRAIGHT_JOIN v.IdPhoto FROM votes v FORCE INDEX (\(userIndex)) JOIN photos p ON (p.IdPhoto = v.IdPhoto) "
            + "JOIN login l ON (l.IdUser = p.IdUser) WHERE v.IdUser = ? AND v.vote = 1 AND v.IdPhoto > ? AND v.IdPhoto < ? "
            + "ORDER BY v.IdPhoto \(order) LIMIT ?"
    }

    public func likedPhotoIDs(by userID: Int64, in page: PageCursor) throws -> [Int64] {
        do {
            return page.newestFirst(try database.query(Self.likedSQL(order: page.sqlOrder), [.int(userID)] + page.sqlArguments)
                .compactMap { $0.int64("IdPhoto") })
        } catch {
            // (Not `catch … where`: this compiler fails on it with typed throws.)
            throw error.code == .keyDoesNotExist ? LikesNotIndexed() : error
        }
    }

    /// A range of migration 013's index (IdUser, IdPhoto, vote); without it,
    /// the primary key (IdPhoto, IdUser) in order: all the pages together
    /// read the table once.
    public func votes(byUser userID: Int64, after photoID: Int64, limit: Int) throws -> [(photoID: Int64, vote: Vote)] {
        try database.query("SELECT IdPhoto, vote FROM votes WHERE IdUser = ? AND IdPhoto > ? ORDER BY IdPhoto LIMIT ?",
                           [.int(userID), .int(photoID), .int(Int64(limit))]).compactMap { row in
            guard let id = row.int64("IdPhoto"), let vote = row.int64("vote").flatMap(Vote.init(rawValue:)) else { return nil }
            return (id, vote)
        }
    }

    /// What a change of vote does to one count: +1, -1 or 0.
    private static func change(of kind: Vote, from old: Vote?, to new: Vote?) -> Int64 {
        (new == kind ? 1 : 0) - (old == kind ? 1 : 0)
    }
}
