/// An app registered through `POST /api/v1/apps`.
public struct OAuthApp: Sendable, Equatable {
    public var id: Int64
    /// Public: it names the app in every OAuth request.
    public var clientID: String
    /// `OAuthSecret.hash` of its client_secret.
    public var secretHash: String
    public var name: String
    /// Empty when none was given.
    public var website: String
    /// Where codes may be sent; `urn:ietf:wg:oauth:2.0:oob` shows the code instead.
    public var redirectURIs: [String]
    public var scopes: OAuthScopes
    /// Unix seconds.
    public var created: Int64

    public init(id: Int64, clientID: String, secretHash: String, name: String, website: String, redirectURIs: [String],
                scopes: OAuthScopes, created: Int64) {
        self.id = id
        self.clientID = clientID
        self.secretHash = secretHash
        self.name = name
        self.website = website
        self.redirectURIs = redirectURIs
        self.scopes = scopes
        self.created = created
    }
}

/// An access token as stored: found by the SHA-256 of what the client holds.
public struct StoredAccessToken: Sendable, Equatable {
    public var id: Int64
    public var appID: Int64
    /// Nil: the app's own token (client credentials).
    public var userID: Int64?
    public var scopes: OAuthScopes
    /// Unix seconds, each; 0: never used, does not expire, not revoked.
    public var created: Int64
    public var expires: Int64
    public var lastUsed: Int64
    public var revoked: Int64

    public init(id: Int64, appID: Int64, userID: Int64?, scopes: OAuthScopes, created: Int64, expires: Int64,
                lastUsed: Int64, revoked: Int64) {
        self.id = id
        self.appID = appID
        self.userID = userID
        self.scopes = scopes
        self.created = created
        self.expires = expires
        self.lastUsed = lastUsed
        self.revoked = revoked
    }

    /// Not revoked and not expired at `now`.
    public func isValid(at now: Int64) -> Bool { revoked == 0 && (expires == 0 || now < expires) }
}

/// What a new access token is stored with.
public struct NewAccessToken: Sendable {
    public var hash: String
    public var appID: Int64
    public var userID: Int64?
    public var scopes: OAuthScopes
    public var created: Int64
    /// 0: never.
    public var expires: Int64

    public init(hash: String, appID: Int64, userID: Int64?, scopes: OAuthScopes, created: Int64, expires: Int64) {
        self.hash = hash
        self.appID = appID
        self.userID = userID
        self.scopes = scopes
        self.created = created
        self.expires = expires
    }
}

/// An authorization code, from the consent to its exchange for a token.
public struct AuthorizationCode: Sendable, Equatable {
    public var hash: String
    public var appID: Int64
    public var userID: Int64
    /// The one the authorization request named: the token request must name it again.
    public var redirectURI: String
    public var scopes: OAuthScopes
    /// PKCE (RFC 7636); nil when the client sent no challenge.
    public var challenge: String?
    public var challengeMethod: PKCEMethod?
    /// Unix seconds.
    public var expires: Int64

    public init(hash: String, appID: Int64, userID: Int64, redirectURI: String, scopes: OAuthScopes, challenge: String?,
                challengeMethod: PKCEMethod?, expires: Int64) {
        self.hash = hash
        self.appID = appID
        self.userID = userID
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.challenge = challenge
        self.challengeMethod = challengeMethod
        self.expires = expires
    }
}

/// What exchanging a code did.
public enum CodeRedemption: Sendable, Equatable {
    /// The code was unused and current: the token is stored under this id.
    case issued(tokenID: Int64, code: AuthorizationCode)
    /// No such code, or it expired.
    case invalid
    /// The code was not for this request (another app, redirect URI or
    /// verifier): nothing issued, the code still unused.
    case refused
    /// Used before: the token it gave is revoked now (RFC 6749 §4.1.2: the
    /// code was probably stolen), and no token is issued. `revokedToken`:
    /// whether that token was live until now (not at a second replay).
    case replayed(revokedToken: Bool)
}

/// An app a person has given access, as `authorized_apps` lists it.
public struct AuthorizedApp: Sendable, Equatable {
    public var appID: Int64
    public var name: String
    public var website: String
    /// Every scope of the person's live tokens for it.
    public var scopes: OAuthScopes
    /// Unix seconds: its first live token, and its latest use (0: none yet).
    public var authorized: Int64
    public var lastUsed: Int64

    public init(appID: Int64, name: String, website: String, scopes: OAuthScopes, authorized: Int64, lastUsed: Int64) {
        self.appID = appID
        self.name = name
        self.website = website
        self.scopes = scopes
        self.authorized = authorized
        self.lastUsed = lastUsed
    }
}

/// OAuth's apps, access tokens and authorization codes (migration 010).
/// Secrets are given and found by their `OAuthSecret.hash` only.
public protocol OAuthStore: AnyObject {
    /// Stores a new app and returns it with its id.
    func addApp(_ app: OAuthApp) throws -> OAuthApp
    func app(clientID: String) throws -> OAuthApp?
    func app(id: Int64) throws -> OAuthApp?

    func addToken(_ token: NewAccessToken) throws -> Int64
    /// The token with this hash, whatever its state, if its user (if any)
    /// still has an account.
    func token(hash: String) throws -> StoredAccessToken?
    /// Records a use (`last_used`).
    func noteUse(tokenID: Int64, at now: Int64) throws
    /// RFC 7009: revokes the token if `appID`'s; whether a live token was
    /// revoked now (false for no such token of that app, or one revoked before).
    func revokeToken(hash: String, appID: Int64, at now: Int64) throws -> Bool
    /// Revokes every token `userID` gave `appID`; how many were live.
    func revokeTokens(userID: Int64, appID: Int64, at now: Int64) throws -> Int
    /// Forgets every token and code of `userID` (a deleted account).
    func forget(userID: Int64) throws
    /// The apps holding a live token of `userID`, most recently authorized first.
    func authorizedApps(userID: Int64, at now: Int64) throws -> [AuthorizedApp]

    /// Stores a code (and forgets the ones expired at `now`).
    func addCode(_ code: AuthorizationCode, at now: Int64) throws
    /// Exchanges the code, if unused and current at `now`, for the token
    /// `issue` makes of it (nil: the request does not match the code) once:
    /// atomically, so two requests with one code never both get a token.
    func redeemCode(hash: String, at now: Int64, issue: (AuthorizationCode) -> NewAccessToken?) throws -> CodeRedemption
}
