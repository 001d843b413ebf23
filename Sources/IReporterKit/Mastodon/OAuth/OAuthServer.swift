/// The rules of Mastodon's OAuth 2.0 (RFC 6749, PKCE of RFC 7636,
/// revocation of RFC 7009) over an `OAuthStore`: apps, authorization codes,
/// access tokens. The endpoints (`OAuthEndpoints`) read the HTTP request and
/// write the answer; everything decided is decided here, on a clock a test
/// steps. Secrets leave it once, in the answer that hands them out.
public struct OAuthServer {
    /// A code is good for 10 minutes (RFC 6749 §4.1.2's maximum), once.
    public static let codeLifetimeSeconds: Int64 = 600

    let store: any OAuthStore
    let clock: any WallClock
    /// 0: tokens do not expire (Mastodon's way); else their lifetime.
    let tokenLifetimeSeconds: Int64
    /// Told of every revocation: workers keep the tokens they found (`OAuthAccessTokens`).
    let counters: (any SharedCounters)?

    public init(store: any OAuthStore, clock: any WallClock, tokenLifetimeSeconds: Int64 = 0,
                counters: (any SharedCounters)? = nil) {
        self.store = store
        self.clock = clock
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
        self.counters = counters
    }

    /// A token as the token endpoint hands it out: the secret itself, once.
    public struct IssuedToken: Equatable, Sendable {
        public let secret: String
        public let scopes: OAuthScopes
        public let created: Int64
    }

    // MARK: apps

    /// Why an app cannot be registered (Mastodon: 422 "Validation failed: …").
    /// What an app's redirect URIs may take together (the column's size).
    static let maxRedirectURIBytes = 8000

    public struct AppRefusal: Error, Equatable {
        public let message: String
    }

    /// Text without control, bidi or invisible characters (empty is fine).
    private static func isShownAsIs(_ text: some StringProtocol) -> Bool {
        do {
            _ = try TextRules.checked(Array(text.utf8), as: .title)
            return true
        } catch {
            return error == .blank
        }
    }

    /// Registers an app; its client_secret is answered now and stored as a hash.
    public func registerApp(name: String, redirectURIs: [String], scopes: OAuthScopes, website: String) throws
        -> (app: OAuthApp, secret: String) {
        let name = name.trimmingSpaces
        guard !name.isEmpty else { throw AppRefusal(message: "Validation failed: Application name can't be blank") }
        guard name.utf8.count <= 255 else {
            throw AppRefusal(message: "Validation failed: Application name is too long (maximum is 255 characters)")
        }
        // Name, website and redirect URIs are shown on the consent page and in
        // people's authorized apps: a title's rules (a bidi override would
        // turn the page's sentence around them).
        do {
            _ = try TextRules.checked(Array(name.utf8), as: .title)
        } catch {
            throw AppRefusal(message: "Validation failed: Application name " + (error == .blank ? "can't be blank"
                                                                                 : "cannot contain control or invisible characters"))
        }
        if !Self.isShownAsIs(website) {
            throw AppRefusal(message: "Validation failed: Website cannot contain control or invisible characters")
        }
        let uris = redirectURIs.flatMap { $0.split(whereSeparator: \.isNewline) }.map(\.trimmingSpaces).filter { !$0.isEmpty }
        guard !uris.isEmpty else { throw AppRefusal(message: "Validation failed: Redirect URI can't be blank") }
        guard uris.count <= 20 else { throw AppRefusal(message: "Validation failed: Redirect URI: at most 20") }
        if !uris.allSatisfy(Self.isShownAsIs) {
            throw AppRefusal(message: "Validation failed: Redirect URI cannot contain control or invisible characters")
        }
        if let refusal = uris.lazy.compactMap(RedirectURI.refusal).first {
            throw AppRefusal(message: "Validation failed: \(refusal)")
        }
        // Kept one a line in oauth_apps.redirect_uris, varbinary(8000): past it the INSERT would fail as an outage.
        guard uris.joined(separator: "\n").utf8.count <= Self.maxRedirectURIBytes else {
            throw AppRefusal(message: "Validation failed: Redirect URIs are too long (at most \(Self.maxRedirectURIBytes) bytes in all)")
        }
        guard website.utf8.count <= 2000 else { throw AppRefusal(message: "Validation failed: Website is too long") }
        let secret = OAuthSecret.random()
        let app = try store.addApp(OAuthApp(id: 0, clientID: OAuthSecret.random(), secretHash: OAuthSecret.hash(secret),
                                            name: name, website: website, redirectURIs: uris,
                                            scopes: scopes, created: clock.unixSeconds))
        return (app, secret)
    }

    /// The app whose client_id and client_secret these are, compared in
    /// constant time; `invalid_client` otherwise.
    public func authenticateClient(id: String?, secret: String?) throws -> OAuthApp {
        guard let id, let secret, let app = try store.app(clientID: id),
              PasswordHasher.constantTimeEqual(Array(OAuthSecret.hash(secret).utf8), Array(app.secretHash.utf8))
        else { throw OAuthError(.invalidClient) }
        return app
    }

    // MARK: authorization codes

    /// An authorization request whose client and redirect URI are known good.
    public struct AuthorizationRequest: Equatable, Sendable {
        public let app: OAuthApp
        public let redirectURI: String
        public let scopes: OAuthScopes
        public let state: String?
        public let challenge: String?
        public let challengeMethod: PKCEMethod?

        public var isOutOfBand: Bool { redirectURI == RedirectURI.outOfBand }

        /// Where the browser is sent with `parameters` (the code, or an error), `state` added.
        public func redirect(with parameters: [(String, String)]) -> String {
            RedirectURI.adding(parameters + (state.map { [("state", $0)] } ?? []), to: redirectURI)
        }
    }

    /// What is wrong with an authorization request.
    public enum AuthorizationProblem: Error, Equatable {
        /// The client or the redirect URI is not one we can trust: said on
        /// our own page, never by sending the browser anywhere (RFC 6749 §4.1.2.1).
        case refused(String)
        /// The rest, the app's mistakes: told on our page, with a link back
        /// to the app's redirect URI carrying `error=` (`AuthorizePage.Step.failed`).
        case redirected(OAuthError, AuthorizationRequest)
    }

    /// Checks `/oauth/authorize`'s parameters (the page's GET and its POST alike).
    public func authorizationRequest(clientID: String?, redirectURI: String?, responseType: String?, scope: String?,
                                     state: String?, challenge: String?, challengeMethod: String?) throws
        -> AuthorizationRequest {
        guard let clientID, let app = try store.app(clientID: clientID) else {
            throw AuthorizationProblem.refused("This application is unknown here (client_id).")
        }
        // Without redirect_uri, the app's only one (RFC 6749 §3.1.2.3).
        guard let uri = redirectURI.flatMap({ $0.isEmpty ? nil : $0 }) ?? (app.redirectURIs.count == 1 ? app.redirectURIs[0] : nil),
              app.redirectURIs.contains(uri) else {
            throw AuthorizationProblem.refused("The redirect URI is not one this application registered.")
        }
        var request = AuthorizationRequest(app: app, redirectURI: uri, scopes: app.scopes, state: state.flatMap { $0.isEmpty ? nil : $0 },
                                           challenge: nil, challengeMethod: nil)
        func problem(_ error: OAuthError) -> AuthorizationProblem { .redirected(error, request) }
        guard responseType == "code" else {
            throw problem(responseType == nil ? .missing("response_type") : OAuthError(.unsupportedResponseType))
        }
        let scopes = try requestedScopes(scope, of: app, problem: problem)
        let method: PKCEMethod?
        if let challenge, !challenge.isEmpty {
            guard PKCEMethod.isWellFormed(challenge) else { throw problem(OAuthError(.invalidRequest, "Invalid code_challenge.")) }
            // RFC 7636 §4.3: plain when the method is not named.
            guard let named = PKCEMethod(rawValue: challengeMethod.flatMap { $0.isEmpty ? nil : $0 } ?? "plain") else {
                throw problem(OAuthError(.invalidRequest, "The code_challenge_method must be S256 or plain."))
            }
            method = named
        } else {
            method = nil
        }
        request = AuthorizationRequest(app: app, redirectURI: uri, scopes: scopes, state: request.state,
                                       challenge: method == nil ? nil : challenge, challengeMethod: method)
        return request
    }

    /// The scopes a request names, at most the app's; none named: the app's
    /// default (Mastodon: `read`, or the app's own when narrower).
    private func requestedScopes(_ text: String?, of app: OAuthApp, problem: (OAuthError) -> some Error) throws -> OAuthScopes {
        guard let text, !text.allSatisfy({ $0 == " " || $0 == "+" }) else {
            return app.scopes.covers(all: .defaultScopes) ? .defaultScopes : app.scopes
        }
        guard let scopes = OAuthScopes(parsing: text), app.scopes.covers(all: scopes) else { throw problem(OAuthError(.invalidScope)) }
        return scopes
    }

    /// The person said yes: a code for the app, good once for 10 minutes.
    public func issueCode(for request: AuthorizationRequest, userID: Int64) throws -> String {
        let code = OAuthSecret.random()
        let now = clock.unixSeconds
        try store.addCode(AuthorizationCode(hash: OAuthSecret.hash(code), appID: request.app.id, userID: userID,
                                            redirectURI: request.redirectURI, scopes: request.scopes, challenge: request.challenge,
                                            challengeMethod: request.challengeMethod, expires: now + Self.codeLifetimeSeconds),
                          at: now)
        return code
    }

    // MARK: tokens

    /// `grant_type=authorization_code`: the code, for the app it was given
    /// to, with the redirect URI it was asked with and (PKCE) the verifier.
    public func exchange(code: String?, redirectURI: String?, verifier: String?, app: OAuthApp) throws -> IssuedToken {
        guard let code, !code.isEmpty else { throw OAuthError.missing("code") }
        let now = clock.unixSeconds
        // Omitted, it is the app's only one, as in the authorization request.
        let redirectURI = redirectURI.flatMap { $0.isEmpty ? nil : $0 } ?? (app.redirectURIs.count == 1 ? app.redirectURIs[0] : nil)
        var refusal = OAuthError(.invalidGrant)
        var secret = ""
        let redemption = try Self.grantedWhileTheAccountIs { try store.redeemCode(hash: OAuthSecret.hash(code), at: now) { stored in
            guard stored.appID == app.id, redirectURI == stored.redirectURI else { return nil }
            if let challenge = stored.challenge, let method = stored.challengeMethod {
                guard let verifier, method.verifies(verifier, challenge: challenge) else {
                    refusal = OAuthError(.invalidGrant, "The code_verifier does not match the code_challenge.")
                    return nil
                }
            }
            let token: NewAccessToken
            (token, secret) = newToken(app: app, userID: stored.userID, scopes: stored.scopes, now: now)
            return token
        } }
        // Only a token revoked now changes what the caches may keep: a
        // replay again (anyone holding a used code) flushes nothing.
        if case .replayed(revokedToken: true) = redemption { counters?.noteGrantsRevoked() }
        guard case .issued(_, let stored) = redemption else { throw refusal }
        return IssuedToken(secret: secret, scopes: stored.scopes, created: now)
    }

    /// `grant_type=password` (the person's password checked by the caller)
    /// and `client_credentials` (`userID` nil: the app's own token).
    public func issueToken(app: OAuthApp, userID: Int64?, scope: String?) throws -> IssuedToken {
        let scopes = try requestedScopes(scope, of: app) { $0 }
        let now = clock.unixSeconds
        let (token, secret) = newToken(app: app, userID: userID, scopes: scopes, now: now)
        _ = try Self.grantedWhileTheAccountIs { try store.addToken(token) }
        return IssuedToken(secret: secret, scopes: scopes, created: now)
    }

    /// An account deleted while its grant was on its way gets no token (the store keeps none).
    private static func grantedWhileTheAccountIs<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch PhotoStoreError.accountRemoved {
            throw OAuthError(.invalidGrant)
        }
    }

    private func newToken(app: OAuthApp, userID: Int64?, scopes: OAuthScopes, now: Int64) -> (token: NewAccessToken, secret: String) {
        let secret = OAuthSecret.random()
        return (NewAccessToken(hash: OAuthSecret.hash(secret), appID: app.id, userID: userID, scopes: scopes, created: now,
                               expires: tokenLifetimeSeconds > 0 ? now + tokenLifetimeSeconds : 0), secret)
    }

    /// RFC 7009: the app's token is revoked; any other token (unknown,
    /// another app's, revoked before) is left as it is, and the answer is
    /// the same. Only a live token revoked flushes the caches that kept it.
    public func revoke(token: String?, app: OAuthApp) throws {
        guard let token, !token.isEmpty else { throw OAuthError.missing("token") }
        if try store.revokeToken(hash: OAuthSecret.hash(token), appID: app.id, at: clock.unixSeconds) {
            counters?.noteGrantsRevoked()
        }
    }

    /// Tokens are marked used at most once an hour: a read-mostly client
    /// costs no write per request.
    static let useRecordedEverySeconds: Int64 = 3600

    /// The live token the client holds, if it is one; its use recorded.
    public func token(presented secret: [UInt8]) throws -> StoredAccessToken? {
        guard !secret.isEmpty else { return nil }
        return try token(hash: OAuthSecret.hash(secret))
    }

    /// The live token with this hash, if there is one; its use recorded.
    func token(hash: String) throws -> StoredAccessToken? {
        guard let token = try store.token(hash: hash) else { return nil }
        return try checked(token)
    }

    /// `token` if it is live now, its use recorded (in `lastUsed` too).
    func checked(_ token: StoredAccessToken) throws -> StoredAccessToken? {
        let now = clock.unixSeconds
        guard token.isValid(at: now) else { return nil }
        guard now - token.lastUsed >= Self.useRecordedEverySeconds else { return token }
        try store.noteUse(tokenID: token.id, at: now)
        var used = token
        used.lastUsed = now
        return used
    }
}
