import IReporterKit
import Testing

/// What every `OAuthStore` does alike, checked on a fresh store whose users
/// 1 and 2 exist: the unit tests run it on the in-memory store, the
/// integration tests on MariaDB.
public enum OAuthStoreBehaviour {
    static let now: Int64 = 1_700_000_000

    static func app(_ name: String, clientID: String) -> OAuthApp {
        OAuthApp(id: 0, clientID: clientID, secretHash: OAuthSecret.hash("secret of \(name)"), name: name,
                 website: "https://example.com/\(name)", redirectURIs: ["https://example.com/cb", "app.example:/cb"],
                 scopes: OAuthScopes(parsing: "read write follow")!, created: now)
    }

    static func token(_ secret: String, app: Int64, user: Int64?, scopes: String, expires: Int64 = 0) -> NewAccessToken {
        NewAccessToken(hash: OAuthSecret.hash(secret), appID: app, userID: user, scopes: OAuthScopes(parsing: scopes)!,
                       created: now, expires: expires)
    }

    public static func appsAreFoundByClientIDAndID(_ store: any OAuthStore) throws {
        let first = try store.addApp(app("Tusky é", clientID: "c1"))
        let second = try store.addApp(app("toot", clientID: "c2"))
        #expect(first.id != second.id)
        #expect(try store.app(clientID: "c1") == first)
        #expect(try store.app(id: second.id) == second)
        #expect(try store.app(clientID: "c1")?.redirectURIs == ["https://example.com/cb", "app.example:/cb"])
        #expect(try store.app(clientID: "c1")?.name == "Tusky é")
        #expect(try store.app(clientID: "C1") == nil, "client ids are compared exactly")
        #expect(try store.app(id: 999) == nil)
    }

    public static func tokensAreFoundByHashListedAndRevoked(_ store: any OAuthStore) throws {
        let tusky = try store.addApp(app("Tusky", clientID: "c1")).id
        let toot = try store.addApp(app("toot", clientID: "c2")).id
        let id = try store.addToken(token("t1", app: tusky, user: 1, scopes: "read"))
        _ = try store.addToken(token("t2", app: tusky, user: 1, scopes: "write:statuses"))
        _ = try store.addToken(token("t3", app: toot, user: 1, scopes: "read"))
        _ = try store.addToken(token("t4", app: tusky, user: 2, scopes: "read"))
        _ = try store.addToken(token("t5", app: toot, user: nil, scopes: "read"))
        _ = try store.addToken(token("old", app: toot, user: 2, scopes: "write", expires: now - 1))

        let found = try #require(try store.token(hash: OAuthSecret.hash("t1")))
        #expect(found == StoredAccessToken(id: id, appID: tusky, userID: 1, scopes: OAuthScopes([.read]), created: now,
                                           expires: 0, lastUsed: 0, revoked: 0))
        #expect(try store.token(hash: OAuthSecret.hash("t5"))?.userID == nil, "an app's own token")
        #expect(try store.token(hash: OAuthSecret.hash("nope")) == nil)
        try store.noteUse(tokenID: id, at: now + 60)
        #expect(try store.token(hash: OAuthSecret.hash("t1"))?.lastUsed == now + 60)

        let apps = try store.authorizedApps(userID: 1, at: now)
        #expect(apps.map(\.name).sorted() == ["Tusky", "toot"])
        let tuskyGrant = try #require(apps.first { $0.appID == tusky })
        #expect(tuskyGrant.scopes == OAuthScopes([.read, .writeStatuses]), "the scopes of its tokens together")
        #expect(tuskyGrant.lastUsed == now + 60)
        #expect(try store.authorizedApps(userID: 2, at: now).map(\.appID) == [tusky], "an expired token is no authorization")

        #expect(try !store.revokeToken(hash: OAuthSecret.hash("t1"), appID: toot, at: now), "only by the app it was given to")
        #expect(try store.token(hash: OAuthSecret.hash("t1"))?.revoked == 0)
        #expect(try store.revokeToken(hash: OAuthSecret.hash("t1"), appID: tusky, at: now + 5))
        #expect(try !store.revokeToken(hash: OAuthSecret.hash("t1"), appID: tusky, at: now + 9), "revoked already: none revoked now")
        #expect(try store.token(hash: OAuthSecret.hash("t1"))?.revoked == now + 5, "the first revocation's time stays")
        #expect(try store.token(hash: OAuthSecret.hash("t1"))?.isValid(at: now + 5) == false)

        #expect(try store.revokeTokens(userID: 1, appID: tusky, at: now + 10) == 1, "t2; t1 was revoked already")
        #expect(try store.authorizedApps(userID: 1, at: now).map(\.appID) == [toot])
        #expect(try store.token(hash: OAuthSecret.hash("t4"))?.revoked == 0, "another person's token of the app stays")
    }

    public static func codesAreSingleUseAndExpire(_ store: any OAuthStore) throws {
        let appID = try store.addApp(app("Tusky", clientID: "c1")).id
        let code = AuthorizationCode(hash: OAuthSecret.hash("code"), appID: appID, userID: 1, redirectURI: "https://example.com/cb",
                                     scopes: OAuthScopes([.read, .write]), challenge: String(repeating: "a", count: 43),
                                     challengeMethod: .s256, expires: now + 600)
        try store.addCode(code, at: now)
        var seen: AuthorizationCode?
        #expect(try store.redeemCode(hash: code.hash, at: now) { seen = $0; return nil } == .refused)
        #expect(seen == code, "the code as stored, PKCE included")
        #expect(try store.redeemCode(hash: code.hash, at: now + 600) { _ in token("x", app: appID, user: 1, scopes: "read") }
                == .invalid, "expired")

        let redemption = try store.redeemCode(hash: code.hash, at: now + 1) { _ in token("t", app: appID, user: 1, scopes: "read write") }
        guard case .issued(let tokenID, let redeemed) = redemption else {
            Issue.record("a refused exchange leaves the code unused: \(redemption)")
            return
        }
        #expect(redeemed == code)
        #expect(try store.token(hash: OAuthSecret.hash("t"))?.id == tokenID)
        var asked = false
        #expect(try store.redeemCode(hash: code.hash, at: now + 2) { _ in asked = true; return token("t'", app: appID, user: 1, scopes: "read") }
                == .replayed(revokedToken: true))
        #expect(!asked, "a used code issues nothing")
        #expect(try store.token(hash: OAuthSecret.hash("t"))?.revoked == now + 2, "a replayed code revokes its token")
        #expect(try store.redeemCode(hash: code.hash, at: now + 3) { _ in nil } == .replayed(revokedToken: false),
                "replayed again: its token was revoked before")
        #expect(try store.token(hash: OAuthSecret.hash("t"))?.revoked == now + 2)
        #expect(try store.token(hash: OAuthSecret.hash("t'")) == nil)

        var plain = code
        plain.hash = OAuthSecret.hash("plain")
        plain.challenge = nil
        plain.challengeMethod = nil
        try store.addCode(plain, at: now)
        #expect(try store.redeemCode(hash: plain.hash, at: now) { seen = $0; return nil } == .refused)
        #expect(seen?.challenge == nil && seen?.challengeMethod == nil, "no PKCE")
        #expect(try store.redeemCode(hash: OAuthSecret.hash("never"), at: now) { _ in token("t3", app: appID, user: 1, scopes: "read") }
                == .invalid)
        var next = code
        next.hash = OAuthSecret.hash("next")
        try store.addCode(next, at: now + 601)
        #expect(try store.redeemCode(hash: plain.hash, at: now) { _ in token("t4", app: appID, user: 1, scopes: "read") } == .invalid,
                "expired codes are forgotten when the next one is stored")
    }
}
