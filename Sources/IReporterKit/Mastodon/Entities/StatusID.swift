/// A status id, Mastodon's string of digits: a photo's is its IdPhoto as
/// it is (the form API's and the Mastodon API's ids of a photo are one),
/// a comment's is `commentBase` + IdComment. IdPhoto is an `int` column,
/// far below the base, so the two never collide; a comment sorts after
/// every photo, hence after the photo it replies to, and comments among
/// themselves in the order they were made, for clients that compare ids
/// as numbers (within 2^53: JavaScript's numbers hold them exactly).
public enum StatusID: Equatable, Hashable, Sendable, CustomStringConvertible {
    case photo(Int64)
    case comment(Int64)

    /// 10^15: a comment's id reads as `1000000000000042` for IdComment 42.
    public static let commentBase: Int64 = 1_000_000_000_000_000

    /// The id as a number (what `max_id`, `since_id` and `min_id` compare).
    public var value: Int64 {
        switch self {
        case .photo(let id): id
        case .comment(let id): Self.commentBase + id
        }
    }

    public var description: String { String(value) }

    /// From a positive number: below the base a photo, above it a comment.
    public init?(_ value: Int64) {
        guard value > 0 else { return nil }
        self = value > Self.commentBase ? .comment(value - Self.commentBase) : .photo(value)
    }

    /// From the digits of a path or parameter; nil for anything else.
    public init?(_ text: some StringProtocol) {
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = Int64(text) else { return nil }
        self.init(value)
    }
}
