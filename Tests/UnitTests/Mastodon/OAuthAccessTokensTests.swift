import Testing
@testable import IReporterKit

/// A worker's kept tokens (`OAuthAccessTokens`): trusted without a query
/// while the shared generation stands, for a minute at most, never past a
/// revocation or an expiry. Changes made in the store behind the cache's
/// back show what it answers from memory.
struct OAuthAccessTokensTests {
    let harness: AppHarness
    var clock: ManualClock { harness.clock }
    var counters: InMemoryCounters { harness.counters }
    let services: AppServices
    let store: InMemoryOAuthStore
    let server: OAuthServer
    let tokens: OAuthAccessTokens
    let app: OAuthApp

    init() throws {
        harness = try AppHarness(hashesPasswords: false)
        _ = try harness.users.register(username: Array("bob".utf8), password: Array("p".utf8))
        store = InMemoryOAuthStore(users: harness.users)
        var services = harness.services
        services.oauth = store
        services.wallClock = harness.clock
        self.services = services
        server = OAuthServer(store: store, clock: harness.clock, tokenLifetimeSeconds: 7200, counters: harness.counters)
        tokens = OAuthAccessTokens(server: server, counters: harness.counters, clock: harness.clock)
        app = try server.registerApp(name: "Client", redirectURIs: ["https://client.example/cb"],
                                     scopes: #require(OAuthScopes(parsing: "read write")), website: "").app
    }

    func issue() throws -> [UInt8] { Array(try server.issueToken(app: app, userID: 1, scope: "read").secret.utf8) }

    /// Revoked in the store alone, as a process that could not tell the others would leave it.
    func revokeBehindTheCache(_ token: [UInt8]) throws {
        #expect(try store.revokeToken(hash: OAuthSecret.hash(token), appID: app.id, at: clock.unixSeconds))
    }

    @Test func aKeptTokenIsAnsweredFromMemoryUntilTheGenerationChanges() throws {
        let token = try issue()
        #expect(try tokens.grant(forToken: token)?.userID == 1)
        try revokeBehindTheCache(token)
        #expect(try tokens.grant(forToken: token)?.userID == 1, "kept: no query asked")
        counters.bumpStreamGeneration()
        #expect(try tokens.grant(forToken: token) == nil)
    }

    @Test func everyRevocationTellsTheWorkers() throws {
        let token = try issue()
        #expect(try tokens.grant(forToken: token) != nil)
        try server.revoke(token: String(decoding: token, as: UTF8.self), app: app)
        #expect(try tokens.grant(forToken: token) == nil, "RFC 7009's revocation")

        let revokedByApp = try issue()
        #expect(try tokens.grant(forToken: revokedByApp) != nil)
        let bob = SignedInUser(token: 1)
        let context = CommandContext(session: RequestSession(signedIn: bob), isSecure: false, clientAddress: "192.0.2.1")
        _ = try RevokeAppCommand(services).run(RevokeAppCommand.Input(from: ["IdApp": String(app.id)] as CommandArguments), as: bob, in: context)
        #expect(try tokens.grant(forToken: revokedByApp) == nil, "revoke_app")

        let ofDeletedAccount = try issue()
        #expect(try tokens.grant(forToken: ofDeletedAccount) != nil)
        try TokensOfAccount(oauth: store, counters: counters).removeAll(of: 1)
        #expect(try tokens.grant(forToken: ofDeletedAccount) == nil, "delete_account")
    }

    @Test func aKeptTokenIsTrustedForAMinuteAtMost() throws {
        let token = try issue()
        #expect(try tokens.grant(forToken: token) != nil)
        try revokeBehindTheCache(token)
        clock.advance(byMillis: OAuthAccessTokens.maxAgeMillis - 1)
        #expect(try tokens.grant(forToken: token) != nil)
        clock.advance(byMillis: 1)
        #expect(try tokens.grant(forToken: token) == nil, "a revocation whose bump was lost shows within the minute")
    }

    @Test func aKeptTokenExpiresAndItsUseIsStillRecorded() throws {
        let token = try issue()
        let hash = OAuthSecret.hash(token)
        #expect(try tokens.grant(forToken: token) != nil)
        let firstUse = clock.unixSeconds
        #expect(try store.token(hash: hash)?.lastUsed == firstUse)
        clock.advance(bySeconds: 30)
        #expect(try tokens.grant(forToken: token) != nil)
        #expect(try store.token(hash: hash)?.lastUsed == firstUse, "recorded once an hour")
        clock.advance(bySeconds: OAuthServer.useRecordedEverySeconds)
        #expect(try tokens.grant(forToken: token) != nil)
        #expect(try store.token(hash: hash)?.lastUsed == clock.unixSeconds, "recorded again")
        // Kept 10 s before its end: the kept token is refused when it ends.
        clock.advance(bySeconds: 7200 - OAuthServer.useRecordedEverySeconds - 30 - 10)
        #expect(try tokens.grant(forToken: token) != nil)
        counters.bumpStreamGeneration() // not a revocation: the token stays valid for its 10 s
        #expect(try tokens.grant(forToken: token) != nil)
        clock.advance(bySeconds: 10)
        #expect(try tokens.grant(forToken: token) == nil, "expired")
    }

    @Test func unknownTokensAreNotKept() throws {
        let token = try issue()
        #expect(try tokens.grant(forToken: Array("made-up".utf8)) == nil)
        #expect(try tokens.grant(forToken: []) == nil)
        #expect(try tokens.grant(forToken: token) != nil)
    }
}
