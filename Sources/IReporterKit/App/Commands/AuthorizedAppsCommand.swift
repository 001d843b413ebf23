/// `authorized_apps`: the apps the logged-in user has given access through
/// the Mastodon-compatible API's OAuth (a live token each), with what they
/// may do; `revoke_app` takes one's access back.
public struct AuthorizedAppsCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "authorized_apps", "The apps you have given access to your account (Mastodon-compatible API), with their scopes.",
        readOnly: true, result: .authorizedApps)

    private let oauth: any OAuthStore
    private let now: () -> Int64

    public init(_ services: AppServices) {
        oauth = services.oauth
        now = services.now
    }

    public func run(_ input: NoInput, as user: SignedInUser, in context: CommandContext) throws -> AuthorizedAppList {
        AuthorizedAppList(apps: try oauth.authorizedApps(userID: user.id, at: now()))
    }
}
