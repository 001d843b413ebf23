/// `notifications`: what others did to the signed-in user's photos and
/// account (liked a photo, followed them, commented on a photo), newest
/// first, paged with `since`, `before` and `count` by `id`; `types` keeps
/// some kinds only, `IdUser` one person's.
public struct NotificationsCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "notifications", "Likes of your photos, follows of you, comments on your photos; newest first.",
        parameters: CommandParameter.cursor + [Input.types, Input.actor], readOnly: true, result: .notifications)

    public struct Input: CommandInput {
        static let types = CommandParameter.list("types", of: NotificationKind.self, "only these kinds (default: all)",
                                                 invalid: ParameterRules.InvalidValue(name: "types"))
        static let actor = CommandParameter("IdUser", .integer(1...Int64.max), "only what this person did")
        public let page: PageCursor
        public let kinds: Set<NotificationKind>
        public let actor: Int64?

        public init(from parameters: any RequestParameters) throws {
            page = try ParameterRules.cursor(parameters) ?? PageCursor(count: ParameterRules.defaultPageSize)
            let chosen: [NotificationKind] = try Self.types.list(parameters)
            kinds = Set(chosen.isEmpty ? NotificationKind.allCases : chosen)
            actor = try Self.actor.integer(parameters)
        }
    }

    private let notifications: any NotificationStore

    public init(_ services: AppServices) { notifications = services.notifications }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> NotificationList {
        NotificationList(notifications: try notifications.notifications(for: user.id, kinds: input.kinds, actor: input.actor,
                                                                        page: input.page))
    }
}
