/// A photo's counts, details and one viewer's vote: the fields `stream`
/// adds with `extras`.
public struct PhotoExtras: Sendable, Equatable {
    public var likes: Int64
    public var dislikes: Int64
    public var comments: Int64
    /// The viewer's vote (nil: none, or no viewer).
    public var myVote: Vote?
    /// Nil for a photo uploaded before migration 003.
    public var details: PhotoDetails?
    /// Filled only when asked for (`stream`'s `secret` and `server` extras);
    /// nil for a database without migration 006.
    public var secret: PhotoSecret?
    /// The alt text; filled only when asked for (`stream`'s `description` extra).
    public var description: [UInt8]?

    public init(likes: Int64 = 0, dislikes: Int64 = 0, comments: Int64 = 0, myVote: Vote? = nil,
                details: PhotoDetails? = nil) {
        self.likes = likes
        self.dislikes = dislikes
        self.comments = comments
        self.myVote = myVote
        self.details = details
    }
}
