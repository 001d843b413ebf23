/// `comments`: the comments on the photo `IdPhoto`, newest first, paged
/// with `since`, `before` and `count` like the stream.
public struct CommentsCommand: Command {
    public struct Input: CommandInput {
        public let photoID: Int64
        public let page: PageCursor

        public init(from parameters: any RequestParameters) throws {
            photoID = try ParameterRules.requiredID(parameters, "IdPhoto")
            page = try ParameterRules.cursor(parameters)
        }
    }

    private let comments: any CommentStore

    public init(_ services: AppServices) { comments = services.comments }

    public func run(_ input: Input, in context: CommandContext) throws -> CommentList {
        CommentList(comments: try comments.comments(photoID: input.photoID, page: input.page))
    }
}
