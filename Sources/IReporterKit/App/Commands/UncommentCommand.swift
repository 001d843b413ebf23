/// `uncomment`: removes the comment `IdComment`, if the logged-in user
/// wrote it or owns the photo it is on, with the notification it gave.
public struct UncommentCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "uncomment", "Remove your comment, or one on your photo.", parameters: [Input.comment],
        failures: [.notFound, .notAllowed], result: .successful)

    public struct Input: CommandInput {
        static let comment = CommandParameter.id("IdComment", "the comment")
        public let commentID: Int64

        public init(from parameters: any RequestParameters) throws {
            commentID = try Self.comment.requiredInteger(parameters)
        }
    }

    public enum Failure: APIFailure {
        case noSuchComment
        case notAllowed

        public var message: String {
            switch self {
            case .noSuchComment: "No such comment"
            case .notAllowed: "You can only remove your own comments and comments on your photos"
            }
        }

        public var kind: FailureKind {
            switch self {
            case .noSuchComment: .notFound
            case .notAllowed: .notAllowed
            }
        }
    }

    private let comments: any CommentStore
    private let counters: any SharedCounters
    private let notifier: Notifier

    public init(_ services: AppServices) {
        comments = services.comments
        counters = services.counters
        notifier = Notifier(services)
    }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> Successful {
        switch try comments.removeComment(id: input.commentID, by: user.id) {
        case .removed:
            counters.noteStreamChanged() // the counts of cached streams
            notifier.withdrawMention(commentID: input.commentID)
            return Successful()
        case .notFound: throw Failure.noSuchComment
        case .notAllowed: throw Failure.notAllowed
        }
    }
}
