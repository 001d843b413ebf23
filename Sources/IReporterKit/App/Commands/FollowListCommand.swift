/// `followers` and `following` (one handler, registered once for each):
/// the accounts that follow `IdUser`, or that it follows, newest follow
/// first, paged with `since`, `before` and `count` by `IdFollow`. An
/// account that does not exist has none.
public struct FollowListCommand: Command {
    public let descriptor: CommandDescriptor

    public struct Input: CommandInput {
        public let userID: Int64
        public let page: PageCursor

        public init(from parameters: any RequestParameters) throws {
            userID = try CommandParameter.account.requiredInteger(parameters)
            page = try ParameterRules.cursor(parameters) ?? PageCursor(count: ParameterRules.defaultPageSize)
        }
    }

    public enum Side: Sendable { case followers, following }

    private let side: Side
    private let graph: any FollowStore

    public init(_ services: AppServices, _ side: Side) {
        self.side = side
        descriptor = switch side {
        case .followers: CommandDescriptor("followers", "Who follows an account, newest first.",
                                           parameters: [.account] + CommandParameter.cursor, readOnly: true, result: .follows)
        case .following: CommandDescriptor("following", "Whom an account follows, newest first.",
                                           parameters: [.account] + CommandParameter.cursor, readOnly: true, result: .follows)
        }
        graph = services.follows
    }

    public func run(_ input: Input, in context: CommandContext) throws -> FollowList {
        FollowList(rows: try side == .followers ? graph.followers(of: input.userID, page: input.page)
                                                : graph.following(of: input.userID, page: input.page))
    }
}
