/// `familiar_followers`: of the accounts that follow `IdUser`, those the
/// signed-in user follows ("followed by people you know" on a profile),
/// newest of the user's follows first, at most `count`.
public struct FamiliarFollowersCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "familiar_followers", "Of an account's followers, those you follow; the ones you followed last first.",
        parameters: [.account, .count], readOnly: true, result: .follows)

    public struct Input: CommandInput {
        public let userID: Int64
        public let count: Int

        public init(from parameters: any RequestParameters) throws {
            userID = try CommandParameter.account.requiredInteger(parameters)
            count = try CommandParameter.count.integer(parameters).map(Int.init) ?? ParameterRules.defaultPageSize
        }
    }

    private let graph: any FollowStore

    public init(_ services: AppServices) { graph = services.follows }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> FollowList {
        FollowList(rows: try graph.familiarFollowers(of: input.userID, viewer: user.id, limit: input.count))
    }
}
