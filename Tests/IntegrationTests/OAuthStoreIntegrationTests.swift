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
        }
    }
}
