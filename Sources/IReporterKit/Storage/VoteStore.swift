/// A person's vote on a photo, as `votes.vote` stores it.
public enum Vote: Int64, Sendable {
    case like = 1
    case dislike = -1
}

/// The photos one likes, asked of a database without migration 013's index
/// on `votes`: answering would read every vote.
public struct LikesNotIndexed: Error {}

/// One vote per person per photo, and the counts the stream shows, kept
/// together in one transaction.
public protocol VoteStore: AnyObject {
    /// Sets `userID`'s vote on a photo (nil removes it); idempotent. The
    /// photo's counts and the vote afterwards, and whether the vote was
    /// another before (read with it, under the photo's lock); nil when there
    /// is no such photo (then nothing is stored).
    func setVote(_ vote: Vote?, photoID: Int64, userID: Int64) throws -> (extras: PhotoExtras, changed: Bool)?
    /// `userID`'s votes on these photos (those without one are absent).
    func votes(by userID: Int64, on photoIDs: [Int64]) throws -> [Int64: Vote]
    /// Who likes the photo (the Mastodon API's `favourited_by`), paged by
    /// IdUser, the highest first (a vote keeps no time).
    func likers(of photoID: Int64, page: PageCursor) throws -> [(userID: Int64, username: [UInt8])]
    /// The ids of the photos `userID` likes within the page's range, newest
    /// first: photos that are there, with their account. Throws
    /// `LikesNotIndexed` without migration 013.
    func likedPhotoIDs(by userID: Int64, in page: PageCursor) throws -> [Int64]
    /// `userID`'s votes on the photos after `photoID`, by photo id, at most
    /// `limit` (`export`, `delete_account`).
    func votes(byUser userID: Int64, after photoID: Int64, limit: Int) throws -> [(photoID: Int64, vote: Vote)]
}
