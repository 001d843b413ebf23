/// A photo sent to the Mastodon API's media endpoint, checked as `upload`
/// checks one, waiting for the status that posts it.
public struct PendingMedia: Sendable, Equatable {
    public var id: Int64
    public var userID: Int64
    /// The file's name in the upload folder's spool area.
    public var file: String
    public var width: Int
    public var height: Int
    public var description: [UInt8]?
    /// Mastodon's focal point (each -1...1); nil: none set.
    public var focusX: Double?
    public var focusY: Double?
    /// Unix seconds.
    public var created: Int64

    public init(id: Int64 = 0, userID: Int64, file: String, width: Int, height: Int, description: [UInt8]?, focusX: Double?,
                focusY: Double?, created: Int64) {
        (self.id, self.userID, self.file, self.width, self.height) = (id, userID, file, width, height)
        (self.description, self.focusX, self.focusY, self.created) = (description, focusX, focusY, created)
    }
}

/// The media waiting for a status (sql/migrations/011), the photos'
/// descriptions (alt text) and the statuses posted with an `Idempotency-Key`
/// (sql/migrations/012).
/// What `claimPost` found.
public enum PostClaim: Sendable, Equatable {
    /// The key is this post's: make it, then remember (or release) it.
    case claimed
    /// A post with the key made this status.
    case posted(Int64)
    /// A post with the key is being made by another request.
    case underWay
    /// Keys are not kept (before migration 012): post.
    case notKept
}

public protocol MediaStore: AnyObject {
    /// Keeps `media` (its `id` is not read) and answers its new id; nil, and
    /// nothing kept, when its user would have more than `limit` waiting, even
    /// with uploads of theirs arriving together.
    func addPending(_ media: PendingMedia, limit: Int) throws -> Int64?
    /// The pending media `id` (whose it is, the caller checks); nil: none.
    func pending(id: Int64) throws -> PendingMedia?
    /// How many media `userID` has waiting.
    func pendingCount(userID: Int64) throws -> Int
    /// The media `userID` has waiting (at most `MediaEndpoints.maxPending`).
    func pending(ofUser userID: Int64) throws -> [PendingMedia]
    func updatePending(id: Int64, userID: Int64, description: [UInt8]?, focusX: Double?, focusY: Double?) throws
    /// Forgets a pending media (posted, or swept with its file).
    func removePending(id: Int64) throws
    /// Media uploaded before `time` and never posted, oldest first, at most `limit`.
    func pendingCreated(before time: Int64, limit: Int) throws -> [PendingMedia]
    /// The descriptions of those of `ids` that have one (none before migration 011).
    func descriptions(ofPhotos ids: [Int64]) throws -> [Int64: [UInt8]]
    /// Sets (nil or empty: removes) a photo's description.
    func setDescription(_ description: [UInt8]?, ofPhoto id: Int64) throws
    /// Takes the key whose hash is `keyHash` for a post of `userID` at
    /// `time`, unless a post with it was made at or after `since` (its
    /// status) or is under way: a claim made since `abandonedBefore` and not
    /// yet remembered (an older one's request was cut short).
    func claimPost(userID: Int64, keyHash: String, since: Int64, abandonedBefore: Int64, at time: Int64) throws -> PostClaim
    /// Remembers the status posted with a claimed key (before migration 012: nothing).
    func rememberPost(userID: Int64, keyHash: String, statusID: Int64, at time: Int64) throws
    /// Lets a claimed key go again (its post failed), unless a status is remembered for it.
    func releasePost(userID: Int64, keyHash: String) throws
    /// Forgets the keys remembered before `time`, a few hundred at a time.
    func forgetPosts(before time: Int64) throws
    /// Forgets the keys of `userID` (whose account is removed).
    func forgetPosts(ofUser userID: Int64) throws
}
