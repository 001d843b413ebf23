/// What a valid access token allows: whose it is (nil: the app's own
/// token, client credentials), which app holds it, and its scopes.
public struct AccessGrant: Sendable {
    public let userID: Int64?
    public let appID: Int64
    public let scopes: OAuthScopes

    public init(userID: Int64?, appID: Int64, scopes: OAuthScopes) {
        (self.userID, self.appID, self.scopes) = (userID, appID, scopes)
    }
}

/// Looks access tokens up (by their hash: the tokens themselves are never stored).
public protocol AccessTokens {
    /// The grant of a token that is valid now; nil for one that is unknown,
    /// revoked or expired.
    func grant(forToken token: [UInt8]) throws -> AccessGrant?
}
