import Testing
import TestSupport
@testable import IReporterKit

extension DatabaseTests {
    /// `MariaDBOAuthStore` on migration 010's tables: the rules every OAuth
    /// store keeps (`OAuthStoreBehaviour`), and a token that outlives no account.
    @Suite struct OAuthStoreIntegrationTests {
        func store() throws -> (MariaDBOAuthStore, DatabaseConnection) {
            let database = DatabaseConnection(settings: try TestServices.settings())
            try TestServices.resetTables(database)
            try database.command("INSERT INTO login (username, pass) VALUES ('bob', 'p'), ('alice', 'p')")
            return (MariaDBOAuthStore(database: database), database)
        }

        @Test func apps() throws { try OAuthStoreBehaviour.appsAreFoundByClientIDAndID(store().0) }
        @Test func tokens() throws { try OAuthStoreBehaviour.tokensAreFoundByHashListedAndRevoked(store().0) }
        @Test func codes() throws { try OAuthStoreBehaviour.codesAreSingleUseAndExpire(store().0) }

        /// Anyone may register an app without an account: those that signed
        /// no one in go after a day, as tokens that ended do.
        @Test func theSweepRemovesAppsThatSignedNoOneInAndTokensThatEnded() throws {
            let (store, database) = try store()
            let day: Int64 = 86_400, now: Int64 = 10 * day
            func app(_ name: String, created: Int64) throws -> Int64 {
                try store.addApp(OAuthApp(id: 0, clientID: name, secretHash: OAuthSecret.hash("s"), name: name, website: "",
                                          redirectURIs: ["urn:ietf:wg:oauth:2.0:oob"], scopes: OAuthScopes([.read]), created: created)).id
            }
            func token(_ app: Int64, expires: Int64 = 0) throws -> String {
                let hash = OAuthSecret.hash(OAuthSecret.random())
                _ = try store.addToken(NewAccessToken(hash: hash, appID: app, userID: 2, scopes: OAuthScopes([.read]),
                                                      created: now - 3 * day, expires: expires))
                return hash
            }
            let unused = try app("unused", created: now - 2 * day)
            let recent = try app("recent", created: now - day / 2)
            let used = try app("used", created: now - 3 * day)
            let authorizing = try app("authorizing", created: now - 3 * day)
            try store.addCode(AuthorizationCode(hash: OAuthSecret.hash("code"), appID: authorizing, userID: 2,
                                                redirectURI: "urn:ietf:wg:oauth:2.0:oob", scopes: OAuthScopes([.read]), challenge: nil,
                                                challengeMethod: nil, expires: now + 600), at: now)
            let live = try token(used)
            let revokedLong = try token(used), revokedLately = try token(used)
            #expect(try store.revokeToken(hash: revokedLong, appID: used, at: now - 2 * day))
            #expect(try store.revokeToken(hash: revokedLately, appID: used, at: now - 3600))
            let expiredLong = try token(used, expires: now - 2 * day)
            // Apps with their own token alone (client_credentials, never expiring): kept while it is used.
            func appToken(_ app: Int64, usedAt: Int64?) throws {
                let tokenID = try store.addToken(NewAccessToken(hash: OAuthSecret.hash(OAuthSecret.random()), appID: app, userID: nil,
                                                                scopes: OAuthScopes([.read]), created: now - 3 * day, expires: 0))
                if let usedAt { try store.noteUse(tokenID: tokenID, at: usedAt) }
            }
            let idle = try app("idle", created: now - 3 * day)
            try appToken(idle, usedAt: now - 2 * day)
            let reading = try app("reading", created: now - 3 * day)
            try appToken(reading, usedAt: now - 3600)
            try appToken(used, usedAt: nil)  // beside a person's token: the app stays, and so does this one

            #expect(try store.sweep(now: now) == (apps: 2, tokens: 3))
            let apps = try database.query("SELECT id FROM oauth_apps ORDER BY id").compactMap { $0.int64("id") }
            #expect(apps == [recent, used, authorizing, reading] && !apps.contains(unused) && !apps.contains(idle))
            #expect(try database.query("SELECT 1 FROM oauth_tokens WHERE IdUser = 0").count == 2)
            for (hash, kept) in [(live, true), (revokedLately, true), (revokedLong, false), (expiredLong, false)] {
                #expect(try !database.query("SELECT 1 FROM oauth_tokens WHERE token_hash = ?", [.text(hash)]).isEmpty == kept)
            }

            // Before migration 014: nothing removed, rather than whole tables read.
            _ = try app("unused again", created: now - 2 * day)
            try database.command("DROP INDEX \(MariaDBOAuthStore.sweepIndex) ON oauth_tokens")
            #expect(throws: DatabaseError.self) { try store.sweep(now: now) }
            #expect(try database.query("SELECT 1 FROM oauth_apps").count == 5)
        }

        @Test func onlyTheHashIsStoredAndADeletedAccountsTokenIsGone() throws {
            let (store, database) = try store()
            let app = try store.addApp(OAuthApp(id: 0, clientID: "c", secretHash: OAuthSecret.hash("s"), name: "n", website: "",
                                                redirectURIs: ["urn:ietf:wg:oauth:2.0:oob"], scopes: OAuthScopes([.read]),
                                                created: 1))
            let secret = OAuthSecret.random()
            _ = try store.addToken(NewAccessToken(hash: OAuthSecret.hash(secret), appID: app.id, userID: 2,
                                                  scopes: OAuthScopes([.read]), created: 1, expires: 0))
            let stored = try database.query("SELECT token_hash FROM oauth_tokens").map { String(decoding: $0[0] ?? [], as: UTF8.self) }
            #expect(stored == [OAuthSecret.hash(secret)] && stored[0] != secret && stored[0].count == 64)
            #expect(try store.app(clientID: "c")?.website == "")
            #expect(try store.token(hash: OAuthSecret.hash(secret))?.userID == 2)
            try database.command("DELETE FROM login WHERE IdUser = 2")
            #expect(try store.token(hash: OAuthSecret.hash(secret)) == nil)
            // A sign-in that lands after the deletion keeps no token (the deletion's second pass finds one made before).
            #expect(throws: PhotoStoreError.self) {
                try store.addToken(NewAccessToken(hash: OAuthSecret.hash("late"), appID: app.id, userID: 2, scopes: OAuthScopes([.read]),
                                                  created: 2, expires: 0))
            }
            #expect(try database.query("SELECT 1 FROM oauth_tokens WHERE IdUser = 2").count == 1, "only the one made before")
            #expect(try store.addToken(NewAccessToken(hash: OAuthSecret.hash("app"), appID: app.id, userID: nil,
                                                      scopes: OAuthScopes([.read]), created: 2, expires: 0)) > 0, "an app's own token")
        }
    }
}
