/// One row of a person's followers or following: the other account, and
/// the edge's id (the list's cursor).
public struct FollowRecord: Sendable, Equatable {
    /// The edge's id: `since` / `before` page by it.
    public var id: Int64
    public var userID: Int64
    public var username: [UInt8]

    public init(id: Int64, userID: Int64, username: [UInt8]) {
        (self.id, self.userID, self.username) = (id, userID, username)
    }
}

/// A person's place in the graph as a profile shows it.
public struct FollowCounts: Sendable, Equatable {
    public var followers: Int64
    public var following: Int64
    /// Whether the viewer follows them; nil without a viewer.
    public var followedByViewer: Bool?

    public init(followers: Int64, following: Int64, followedByViewer: Bool?) {
        (self.followers, self.following, self.followedByViewer) = (followers, following, followedByViewer)
    }
}

/// Who follows whom (migration 009): one edge per follower and followee.
/// Accounts are the caller's to check; lists show only accounts that exist.
public protocol FollowStore: AnyObject {
    /// Adds the edge; false when it was there already (nothing changed),
    /// or the followee's account is gone (deleted meanwhile: no edge after
    /// its deletion took its edges, `AccountRemoval`).
    func follow(_ followee: Int64, by follower: Int64, created: Int64) throws -> Bool
    /// Removes the edge; false when there was none.
    func unfollow(_ followee: Int64, by follower: Int64) throws -> Bool
    /// Those who follow `userID`, newest edge first.
    func followers(of userID: Int64, page: PageCursor) throws -> [FollowRecord]
    /// Those `userID` follows, newest edge first.
    func following(of userID: Int64, page: PageCursor) throws -> [FollowRecord]
    /// Those `viewer` follows who follow `userID` too, newest of `viewer`'s
    /// edges first, at most `limit` (a record's id is `viewer`'s edge's).
    func familiarFollowers(of userID: Int64, viewer: Int64, limit: Int) throws -> [FollowRecord]
    func counts(of userID: Int64, viewer: Int64?) throws -> FollowCounts
    /// How many accounts `userID` follows (`follow_limit`'s count).
    func followingCount(of userID: Int64) throws -> Int64
    /// Whether `follower` follows `followee`.
    func isFollowing(_ follower: Int64, _ followee: Int64) throws -> Bool
    /// The ids of a page of `userID`'s home feed: the photos of those they
    /// follow and their own, newest first.
    func feed(of userID: Int64, page: PageCursor) throws -> [Int64]
    /// Removes every edge to and from `userID` (the account was deleted).
    func forget(userID: Int64) throws
}
