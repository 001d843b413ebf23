import Testing
import TestSupport
@testable import IReporterKit

/// The in-memory OAuth store keeps the MariaDB store's rules
/// (`OAuthStoreBehaviour`, run on MariaDB by `OAuthStoreIntegrationTests`).
struct InMemoryOAuthStoreTests {
    func store() throws -> InMemoryOAuthStore {
        let users = InMemoryUserStore()
        _ = try users.register(username: Array("bob".utf8), password: Array("p".utf8))
        _ = try users.register(username: Array("alice".utf8), password: Array("p".utf8))
        return InMemoryOAuthStore(users: users)
    }

    @Test func apps() throws { try OAuthStoreBehaviour.appsAreFoundByClientIDAndID(store()) }
    @Test func tokens() throws { try OAuthStoreBehaviour.tokensAreFoundByHashListedAndRevoked(store()) }
    @Test func codes() throws { try OAuthStoreBehaviour.codesAreSingleUseAndExpire(store()) }
}
