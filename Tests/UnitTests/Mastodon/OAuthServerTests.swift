import Testing
@testable import IReporterKit

/// The OAuth rules on the in-memory store and a `ManualClock`.
struct OAuthServerTests {
    let clock = ManualClock(Instant(millis: 1_700_000_000_000))
    let users = InMemoryUserStore()
    let store: InMemoryOAuthStore
    let server: OAuthServer
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    init() throws {
        _ = try users.register(username: Array("bob".utf8), password: Array("p".utf8))
        store = InMemoryOAuthStore(users: users)
        server = OAuthServer(store: store, clock: clock)
    }

    func app(_ uris: [String] = ["https://client.example/cb"], scopes: String = "read write") throws -> (OAuthApp, String) {
        try server.registerApp(name: "Client", redirectURIs: uris, scopes: #require(OAuthScopes(parsing: scopes)), website: "")
    }

    func request(_ app: OAuthApp, redirect: String? = "https://client.example/cb", responseType: String? = "code",
                 scope: String? = nil, state: String? = "xyz", challenge: String? = Self.challenge, method: String? = "S256") throws
        -> OAuthServer.AuthorizationRequest {
        try server.authorizationRequest(clientID: app.clientID, redirectURI: redirect, responseType: responseType, scope: scope,
                                        state: state, challenge: challenge, challengeMethod: method)
    }

    func problem(_ body: () throws -> Any) -> OAuthServer.AuthorizationProblem? {
        do { _ = try body() } catch let problem as OAuthServer.AuthorizationProblem { return problem } catch {}
        return nil
    }

    func oauthError(_ body: () throws -> Any) -> OAuthError? {
        do { _ = try body() } catch let error as OAuthError { return error } catch {}
        return nil
    }

    @Test func anAppIsRegisteredWithItsSecretHashed() throws {
        let (app, secret) = try app(["https://client.example/cb\nmyapp://oauth", RedirectURI.outOfBand])
        #expect(app.redirectURIs == ["https://client.example/cb", "myapp://oauth", RedirectURI.outOfBand])
        #expect(app.secretHash == OAuthSecret.hash(secret) && app.secretHash != secret)
        #expect(try server.authenticateClient(id: app.clientID, secret: secret) == app)
        #expect(oauthError { try server.authenticateClient(id: app.clientID, secret: secret + "x") }?.code == .invalidClient)
        #expect(oauthError { try server.authenticateClient(id: "nope", secret: secret) }?.status == 401)
        #expect(try self.app(scopes: "").0.scopes == OAuthScopes([.read]), "none named: read")
    }

    @Test func redirectURIsMustBeAbsoluteWithoutFragmentOrScript() throws {
        for bad in ["/cb", "client.example/cb", "https://client.example/cb#x", "javascript:alert(1)", "data:text/html,x",
                    "https://", "http:///x", "https://client.example/a b", ""] {
            #expect(throws: OAuthServer.AppRefusal.self, "\(bad)") { try app([bad]) }
        }
        #expect(throws: OAuthServer.AppRefusal.self) {
            try server.registerApp(name: " ", redirectURIs: ["https://x.example/"], scopes: .defaultScopes, website: "")
        }
        #expect(try app(["http://127.0.0.1:8123/"]).0.redirectURIs == ["http://127.0.0.1:8123/"], "a command-line client's port")
        // Twenty long ones: refused as too long in all, not stored to fail as an outage (503) in the column.
        let long = (0..<20).map { "https://client.example/\($0)/" + String(repeating: "a", count: 450) }
        #expect(throws: OAuthServer.AppRefusal(message: "Validation failed: Redirect URIs are too long (at most 8000 bytes in all)")) {
            try app(long)
        }
        #expect(try app(Array(long.prefix(16))).0.redirectURIs.count == 16)
    }

    @Test func anUnknownClientOrUnregisteredRedirectIsRefusedNeverRedirected() throws {
        let (app, _) = try app()
        #expect(problem { try server.authorizationRequest(clientID: "nope", redirectURI: "https://client.example/cb",
                                                          responseType: "code", scope: nil, state: nil, challenge: nil,
                                                          challengeMethod: nil) }
                == .refused("This application is unknown here (client_id)."))
        guard case .refused = problem({ try request(app, redirect: "https://evil.example/cb") }) else {
            Issue.record("an unregistered redirect URI is refused on our page")
            return
        }
        guard case .refused = problem({ try request(app, redirect: "https://client.example/cb/../x") }) else {
            Issue.record("compared exactly")
            return
        }
        #expect(try request(app, redirect: nil).redirectURI == "https://client.example/cb", "the app's only one")
    }

    @Test func otherMistakesGoBackToTheApp() throws {
        let (app, _) = try app()
        guard case .redirected(let error, let sentBack) = problem({ try request(app, scope: "read follow") }) else {
            Issue.record("a scope the app did not register is sent back")
            return
        }
        #expect(error.code == .invalidScope)
        #expect(sentBack.redirect(with: [("error", error.code.rawValue)]) == "https://client.example/cb?error=invalid_scope&state=xyz")
        guard case .redirected(let unsupported, _) = problem({ try request(app, responseType: "token") }) else {
            Issue.record("only the code flow")
            return
        }
        #expect(unsupported.code == .unsupportedResponseType)
        guard case .redirected(let method, _) = problem({ try request(app, method: "S512") }) else {
            Issue.record("S256 and plain only")
            return
        }
        #expect(method.code == .invalidRequest)
        #expect(try request(app, scope: "write:statuses read").scopes == OAuthScopes([.writeStatuses, .read]))
        #expect(try request(app, challenge: Self.verifier, method: nil).challengeMethod == .plain, "RFC 7636: plain by default")
    }

    @Test func theCodeFlowWithPKCE() throws {
        let (app, _) = try app()
        let request = try request(app, scope: "read write:statuses", state: "a b&c")
        let code = try server.issueCode(for: request, userID: 1)
        #expect(request.redirect(with: [("code", code)]) == "https://client.example/cb?code=\(code)&state=a%20b%26c")
        #expect(oauthError { try server.exchange(code: code, redirectURI: "https://client.example/cb", verifier: "wrong" + Self.verifier, app: app) }
                == OAuthError(.invalidGrant, "The code_verifier does not match the code_challenge."))
        #expect(oauthError { try server.exchange(code: code, redirectURI: "https://client.example/cb", verifier: nil, app: app) }?.code
                == .invalidGrant, "the verifier is required once a challenge was sent")
        #expect(oauthError { try server.exchange(code: code, redirectURI: "https://client.example/other", verifier: Self.verifier, app: app) }?
                .code == .invalidGrant)
        let (other, _) = try self.app()
        #expect(oauthError { try server.exchange(code: code, redirectURI: "https://client.example/cb", verifier: Self.verifier, app: other) }?
                .code == .invalidGrant, "another app's code")

        let token = try server.exchange(code: code, redirectURI: "https://client.example/cb", verifier: Self.verifier, app: app)
        #expect(token.scopes == OAuthScopes([.read, .writeStatuses]) && token.created == clock.unixSeconds)
        let stored = try #require(try server.token(presented: Array(token.secret.utf8)))
        #expect(stored.userID == 1 && stored.appID == app.id)

        #expect(oauthError { try server.exchange(code: code, redirectURI: "https://client.example/cb", verifier: Self.verifier, app: app) }?
                .code == .invalidGrant, "once")
        #expect(try server.token(presented: Array(token.secret.utf8)) == nil, "and the replay revoked the token")
    }

    @Test func aCodeLastsTenMinutes() throws {
        let (app, _) = try app()
        let request = try request(app, challenge: nil)
        let code = try server.issueCode(for: request, userID: 1)
        clock.advance(bySeconds: OAuthServer.codeLifetimeSeconds)
        #expect(oauthError { try server.exchange(code: code, redirectURI: nil, verifier: nil, app: app) }?.code == .invalidGrant)
        let fresh = try server.issueCode(for: request, userID: 1)
        clock.advance(bySeconds: OAuthServer.codeLifetimeSeconds - 1)
        #expect(try server.exchange(code: fresh, redirectURI: nil, verifier: nil, app: app).scopes == OAuthScopes([.read]))
    }

    @Test func passwordAndClientCredentialTokens() throws {
        let (app, _) = try app(scopes: "read write")
        let user = try server.issueToken(app: app, userID: 1, scope: "read")
        #expect(try server.token(presented: Array(user.secret.utf8))?.userID == 1)
        let own = try server.issueToken(app: app, userID: nil, scope: nil)
        #expect(own.scopes == OAuthScopes([.read]))
        #expect(try server.token(presented: Array(own.secret.utf8))?.userID == nil)
        #expect(oauthError { try server.issueToken(app: app, userID: 1, scope: "push") }?.code == .invalidScope)
        #expect(try server.token(presented: Array("made-up".utf8)) == nil)
        #expect(try server.token(presented: []) == nil)
    }

    @Test func revocationAndExpiry() throws {
        let (app, _) = try app()
        let (other, _) = try self.app()
        let token = try server.issueToken(app: app, userID: 1, scope: nil)
        try server.revoke(token: token.secret, app: other)
        #expect(try server.token(presented: Array(token.secret.utf8)) != nil, "only the app it was given to revokes it")
        try server.revoke(token: "unknown", app: app)
        try server.revoke(token: token.secret, app: app)
        #expect(try server.token(presented: Array(token.secret.utf8)) == nil)

        let expiring = OAuthServer(store: store, clock: clock, tokenLifetimeSeconds: 3600)
        let short = try expiring.issueToken(app: app, userID: 1, scope: nil)
        clock.advance(bySeconds: 3599)
        #expect(try expiring.token(presented: Array(short.secret.utf8)) != nil)
        clock.advance(bySeconds: 1)
        #expect(try expiring.token(presented: Array(short.secret.utf8)) == nil, "expired")
    }

    @Test func useIsRecordedAtMostHourly() throws {
        let (app, _) = try app()
        let token = try server.issueToken(app: app, userID: 1, scope: nil)
        let first = clock.unixSeconds
        #expect(try server.token(presented: Array(token.secret.utf8))?.lastUsed == first, "this use, recorded")
        clock.advance(bySeconds: 60)
        _ = try server.token(presented: Array(token.secret.utf8))
        #expect(try store.token(hash: OAuthSecret.hash(token.secret))?.lastUsed == first)
        clock.advance(bySeconds: 3600)
        _ = try server.token(presented: Array(token.secret.utf8))
        #expect(try store.token(hash: OAuthSecret.hash(token.secret))?.lastUsed == clock.unixSeconds)
    }
}
