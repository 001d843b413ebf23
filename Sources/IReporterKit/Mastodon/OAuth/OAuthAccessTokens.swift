/// The access tokens `OAuthServer` issued, as the Mastodon router checks
/// them: found by their hash, valid while neither revoked nor expired.
public struct OAuthAccessTokens: AccessTokens {
    let server: OAuthServer

    public init(server: OAuthServer) { self.server = server }

    public func grant(forToken token: [UInt8]) throws -> AccessGrant? {
        try server.token(presented: token).map { AccessGrant(userID: $0.userID, appID: $0.appID, scopes: $0.scopes) }
    }
}

extension AppServices {
    /// The OAuth server over `oauth`, on the wall clock, with the token lifetime of the settings.
    public var oauthServer: OAuthServer {
        OAuthServer(store: oauth, clock: wallClock, tokenLifetimeSeconds: Int64(policy.oauthTokenLifetimeDays) * 86_400)
    }
}
