/// OAuth's apps, tokens and codes in memory, with the MariaDB store's rules:
/// for the App's and the Mastodon door's unit tests.
public final class InMemoryOAuthStore: OAuthStore {
    /// Whose tokens outlive no account; nil: every user id is an account.
    private let users: InMemoryUserStore?
    private var apps: [OAuthApp] = []
    private var tokens: [(hash: String, token: StoredAccessToken)] = []
    private var codes: [String: (code: AuthorizationCode, tokenID: Int64)] = [:]

    public init(users: InMemoryUserStore? = nil) { self.users = users }

    public func addApp(_ app: OAuthApp) throws -> OAuthApp {
        var stored = app
        stored.id = Int64(apps.count + 1)
        apps.append(stored)
        return stored
    }

    public func app(clientID: String) throws -> OAuthApp? { apps.first { $0.clientID == clientID } }
    public func app(id: Int64) throws -> OAuthApp? { apps.first { $0.id == id } }

    public func addToken(_ token: NewAccessToken) throws -> Int64 {
        let id = (tokens.map(\.token.id).max() ?? 0) + 1 // ids never come back, as AUTO_INCREMENT's
        tokens.append((token.hash, StoredAccessToken(id: id, appID: token.appID, userID: token.userID, scopes: token.scopes,
                                                     created: token.created, expires: token.expires, lastUsed: 0, revoked: 0)))
        return id
    }

    public func token(hash: String) throws -> StoredAccessToken? {
        guard let token = tokens.first(where: { $0.hash == hash })?.token else { return nil }
        if let users, let userID = token.userID, !users.accounts.contains(where: { $0.id == userID }) { return nil }
        return token
    }

    public func noteUse(tokenID: Int64, at now: Int64) throws {
        tokens[Int(tokenID - 1)].token.lastUsed = now
    }

    public func revokeToken(hash: String, appID: Int64, at now: Int64) throws -> Bool {
        guard let index = tokens.firstIndex(where: { $0.hash == hash && $0.token.appID == appID }),
              tokens[index].token.revoked == 0 else { return false }
        tokens[index].token.revoked = now
        return true
    }

    public func revokeTokens(userID: Int64, appID: Int64, at now: Int64) throws -> Int {
        var revoked = 0
        for index in tokens.indices where tokens[index].token.userID == userID && tokens[index].token.appID == appID
            && tokens[index].token.revoked == 0 {
            tokens[index].token.revoked = now
            revoked += 1
        }
        return revoked
    }

    public func forget(userID: Int64) throws {
        tokens.removeAll { $0.token.userID == userID }
        codes = codes.filter { $0.value.code.userID != userID }
    }

    public func authorizedApps(userID: Int64, at now: Int64) throws -> [AuthorizedApp] {
        var result: [AuthorizedApp] = []
        let live = tokens.map(\.token).filter { $0.userID == userID && $0.isValid(at: now) }
        for token in live.sorted(by: { ($0.created, $0.id) > ($1.created, $1.id) }) {
            guard let app = apps.first(where: { $0.id == token.appID }) else { continue }
            if let index = result.firstIndex(where: { $0.appID == app.id }) {
                result[index].scopes = result[index].scopes.union(token.scopes)
                result[index].authorized = min(result[index].authorized, token.created)
                result[index].lastUsed = max(result[index].lastUsed, token.lastUsed)
            } else {
                result.append(AuthorizedApp(appID: app.id, name: app.name, website: app.website, scopes: token.scopes,
                                            authorized: token.created, lastUsed: token.lastUsed))
            }
        }
        return result
    }

    public func addCode(_ code: AuthorizationCode, at now: Int64) throws {
        codes = codes.filter { $0.value.code.expires > now }
        codes[code.hash] = (code, 0)
    }

    public func redeemCode(hash: String, at now: Int64, issue: (AuthorizationCode) -> NewAccessToken?) throws -> CodeRedemption {
        guard let entry = codes[hash] else { return .invalid }
        if entry.tokenID != 0 {
            let index = Int(entry.tokenID - 1)
            let live = tokens[index].token.revoked == 0
            if live { tokens[index].token.revoked = now }
            return .replayed(revokedToken: live)
        }
        guard entry.code.expires > now else { return .invalid }
        guard let token = issue(entry.code) else { return .refused }
        let id = try addToken(token)
        codes[hash]?.tokenID = id
        return .issued(tokenID: id, code: entry.code)
    }
}
