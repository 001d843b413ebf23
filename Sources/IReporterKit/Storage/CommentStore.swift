/// A comment as `comments` lists it, with its author's name.
public struct CommentRecord: Sendable, Equatable {
    public var id: Int64
    public var photoID: Int64
    public var userID: Int64
    /// Nil when the author's account is gone.
    public var username: [UInt8]?
    public var text: [UInt8]
    /// Unix seconds.
    public var created: Int64

    public init(id: Int64, photoID: Int64, userID: Int64, username: [UInt8]?, text: [UInt8], created: Int64) {
        self.id = id
        self.photoID = photoID
        self.userID = userID
        self.username = username
        self.text = text
        self.created = created
    }
}

/// What removing a comment did.
public enum CommentRemoval: Sendable, Equatable {
    case removed
    case notFound
    /// Neither the comment's author nor the photo's owner: nothing changed.
    case notAllowed
}

/// Comments on photos; each change keeps the photo's comment count in the
/// same transaction.
public protocol CommentStore: AnyObject {
    /// Adds a comment, or nil (nothing stored) when there is no such photo.
    func addComment(photoID: Int64, userID: Int64, text: [UInt8], created: Int64) throws -> CommentRecord?
    /// A photo's comments, newest first.
    func comments(photoID: Int64, page: PageCursor) throws -> [CommentRecord]
    /// One comment by its id (the Mastodon API's statuses); nil: none.
    func comment(id: Int64) throws -> CommentRecord?
    /// Removes a comment if `userID` wrote it or owns its photo.
    func removeComment(id: Int64, by userID: Int64) throws -> CommentRemoval
    /// The comments `userID` wrote, on any photo, newest first (`export`,
    /// `delete_account`: rare, so no index of its own).
    func comments(byUser userID: Int64, page: PageCursor) throws -> [CommentRecord]
}
