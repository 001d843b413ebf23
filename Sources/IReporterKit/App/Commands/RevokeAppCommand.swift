/// `revoke_app`: revokes every token the logged-in user gave the app
/// `IdApp` (`authorized_apps` lists them): it is signed out at its next request.
public struct RevokeAppCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "revoke_app", "Take an app's access to your account back (every token you gave it).", parameters: [Input.app],
        failures: [.notFound], result: .successful)

    public struct Input: CommandInput {
        static let app = CommandParameter.id("IdApp", "the app, as `authorized_apps` lists it")
        public let appID: Int64

        public init(from parameters: any RequestParameters) throws {
            appID = try Self.app.requiredInteger(parameters)
        }
    }

    public enum Failure: APIFailure {
        case noSuchApp

        public var message: String { "No such authorized app" }
        public var kind: FailureKind { .notFound }
    }

    private let oauth: any OAuthStore
    private let counters: any SharedCounters
    private let now: () -> Int64

    public init(_ services: AppServices) {
        oauth = services.oauth
        counters = services.counters
        now = services.now
    }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> Successful {
        guard try oauth.revokeTokens(userID: user.id, appID: input.appID, at: now()) > 0 else { throw Failure.noSuchApp }
        counters.noteGrantsRevoked()
        return Successful()
    }
}
