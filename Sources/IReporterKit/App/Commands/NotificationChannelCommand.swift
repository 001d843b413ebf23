/// `notification_channel`: where the signed-in user's new notifications
/// arrive live (nginx's Nchan: `GET` it as EventSource, WebSocket or
/// long-poll), each as a one-row `notifications` answer; none when the
/// server has no live feed. The channel's name is an HMAC of the user's id
/// under the server's publish key: told to its user alone, it cannot be
/// guessed or derived by anyone else (docs/API.md).
public struct NotificationChannelCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "notification_channel", "The live channel of your notifications.", readOnly: true, result: .channel)

    /// The subscriber location of deploy/nginx/ireporter-live.conf.
    static let subscriberPath = "/iReporter/live/"

    private let live: (any LiveFeed)?

    public init(_ services: AppServices) { live = services.live }

    public func run(_ input: NoInput, as user: SignedInUser, in context: CommandContext) -> LiveChannel {
        LiveChannel(path: live.map { Self.subscriberPath + $0.notificationChannel(of: user.id) })
    }
}
