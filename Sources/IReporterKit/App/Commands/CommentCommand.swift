/// `comment`: a logged-in user's comment (`text`) on the photo `IdPhoto`.
/// The text is stored as sent, its line breaks as LF; the rules are
/// `TextRules`' (no control or invisible characters, something visible, at
/// most `TextRules.maxCommentLines` lines), plus a length limit, UTF-8 (so
/// it can be shown) and a per-user rate. The photo's owner is told
/// (`notifications`, as a mention).
public struct CommentCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "comment", "Comment on a photo.", parameters: [.photo, Input.text], rateLimit: CommentCommand.rateLimit,
        failures: [.notFound, .other], result: .comments)

    public struct Input: CommandInput {
        static let text = CommandParameter("text", .text(maxBytes: nil), required: true,
                                           "the comment: at most 1000 bytes and 20 lines, UTF-8, something visible")
        public let photoID: Int64
        public let text: [UInt8]

        public init(from parameters: any RequestParameters) throws {
            photoID = try CommandParameter.photo.requiredInteger(parameters)
            text = try Self.text.text(parameters)
        }
    }

    public enum Failure: APIFailure {
        case empty
        case tooLong
        case invalidText
        case invisibleText
        case blank
        case tooManyLines
        case notUTF8
        case tooManyComments
        case noSuchPhoto

        public var message: String {
            switch self {
            case .empty: "Comments cannot be empty"
            case .tooLong: "Comments are limited to \(CommentCommand.maxTextBytes) bytes"
            case .invalidText: "Comments cannot contain control characters"
            case .invisibleText: "Comments cannot contain invisible characters"
            case .blank: "Comments cannot be blank"
            case .tooManyLines: "Comments are limited to \(TextRules.maxCommentLines) lines"
            case .notUTF8: "Comments must be UTF-8 text"
            case .tooManyComments: "Too many comments, please try again later"
            case .noSuchPhoto: "No such photo"
            }
        }

        public var kind: FailureKind {
            switch self {
            case .noSuchPhoto: .notFound
            case .tooManyComments: .rateLimited
            case .empty, .tooLong, .invalidText, .invisibleText, .blank, .tooManyLines, .notUTF8: .other
            }
        }
    }

    static let rateLimit = RateLimit("comment_rate_limit", \.commentRateLimit, counter: "comment", failure: Failure.tooManyComments)

    /// `comments.text` is varchar(1000), latin1: bytes.
    public static let maxTextBytes = 1000

    private let comments: any CommentStore
    private let photos: any PhotoStore
    private let notifier: Notifier
    private let counters: any SharedCounters
    private let perHour: Int
    private let now: () -> Int64

    public init(_ services: AppServices) {
        comments = services.comments
        photos = services.photos
        notifier = Notifier(services)
        counters = services.counters
        perHour = Self.rateLimit.perHour(services.policy)
        now = services.now
    }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> CommentList {
        if input.text.isEmpty { throw Failure.empty }
        let text: [UInt8]
        do {
            text = try TextRules.checked(input.text, as: .comment)
        } catch {
            switch error {
            case .notUTF8: throw Failure.notUTF8
            case .control: throw Failure.invalidText
            case .invisible: throw Failure.invisibleText
            case .blank: throw Failure.blank
            case .tooManyLines: throw Failure.tooManyLines
            }
        }
        if text.count > Self.maxTextBytes { throw Failure.tooLong }
        try Self.rateLimit.charge(user, perHour: perHour, counters: counters)
        guard let comment = try comments.addComment(photoID: input.photoID, userID: user.id, text: text,
                                                    created: now()) else { throw Failure.noSuchPhoto }
        counters.noteStreamChanged() // the counts of cached streams
        if let photo = try photos.photo(id: input.photoID) { notifier.tell(.mention(comment, on: photo)) }
        return CommentList(comments: [comment])
    }
}
