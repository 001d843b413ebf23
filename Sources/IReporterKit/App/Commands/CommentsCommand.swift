/// `comments`: the comments on the photo `IdPhoto`, newest first, paged
/// with `since`, `before` and `count` like the stream.
public struct CommentsCommand: Command {
    public let descriptor = CommandDescriptor(
        "comments", "A photo's comments, newest first.", parameters: [.photo] + CommandParameter.cursor, readOnly: true,
        result: .comments)

    public struct Input: CommandInput {
        public let photoID: Int64
        public let page: PageCursor

        public init(from parameters: any RequestParameters) throws {
            photoID = try CommandParameter.photo.requiredInteger(parameters)
            page = try ParameterRules.cursor(parameters) ?? PageCursor(count: ParameterRules.defaultPageSize)
        }
    }

    private let comments: any CommentStore

    public init(_ services: AppServices) { comments = services.comments }

    public func run(_ input: Input, in context: CommandContext) throws -> CommentList {
        CommentList(comments: try comments.comments(photoID: input.photoID, page: input.page))
    }
}
