/// `dismiss`: removes the signed-in user's notification `id`, or all of
/// them with `all=1`.
public struct DismissCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "dismiss", "Remove one of your notifications, or all of them.", parameters: [Input.id, Input.all],
        failures: [.notFound], result: .successful)

    public enum Everything: String, CaseIterable { case yes = "1" }

    public struct Input: CommandInput {
        static let id = CommandParameter("id", .integer(1...Int64.max), "the notification (one of `id` and `all`)")
        static let all = CommandParameter.choice("all", of: Everything.self, "`1`: every notification",
                                                 invalid: ParameterRules.InvalidValue(name: "all"))
        /// Nil: all of them.
        public let notificationID: Int64?

        public init(from parameters: any RequestParameters) throws {
            notificationID = try Self.id.integer(parameters)
            let all: Everything? = try Self.all.choice(parameters)
            if notificationID == nil && all == nil { throw ParameterRules.Missing(name: "id") }
        }
    }

    public enum Failure: APIFailure {
        case noSuchNotification
        public var message: String { "No such notification" }
        public var kind: FailureKind { .notFound }
    }

    private let notifications: any NotificationStore

    public init(_ services: AppServices) { notifications = services.notifications }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> Successful {
        if let id = input.notificationID {
            guard try notifications.dismiss(id: id, for: user.id) else { throw Failure.noSuchNotification }
        } else {
            _ = try notifications.dismissAll(for: user.id)
        }
        return Successful()
    }
}
