/// `oauth_apps`, `oauth_tokens` and `oauth_codes` (migration 010). Every
/// read is the primary's: a token revoked a moment ago must not work on a
/// lagging replica.
public final class MariaDBOAuthStore: OAuthStore {
    let database: DatabaseConnection

    public init(database: DatabaseConnection) { self.database = database }

    public func addApp(_ app: OAuthApp) throws -> OAuthApp {
        let id = try database.execute(
            "INSERT INTO oauth_apps (client_id, secret_hash, name, website, redirect_uris, scopes, created) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [.text(app.clientID), .text(app.secretHash), .text(app.name), .text(app.website),
             .text(app.redirectURIs.joined(separator: "\n")), .text(app.scopes.description), .int(app.created)]).insertID
        var stored = app
        stored.id = Int64(id)
        return stored
    }

    private static let appColumns = "SELECT id, client_id, secret_hash, name, website, redirect_uris, scopes, created FROM oauth_apps"

    public func app(clientID: String) throws -> OAuthApp? {
        try database.query("\(Self.appColumns) WHERE client_id = ?", [.text(clientID)]).first.flatMap(Self.app)
    }

    public func app(id: Int64) throws -> OAuthApp? {
        try database.query("\(Self.appColumns) WHERE id = ?", [.int(id)]).first.flatMap(Self.app)
    }

    public func addToken(_ token: NewAccessToken) throws -> Int64 { try insert(token) }

    /// A person's token only while the account is there, asked after the
    /// row is in (`AccountRow`): an account's deletion removes its tokens
    /// again once its row is gone, and finds any made before.
    private func insert(_ token: NewAccessToken) throws -> Int64 {
        let id = Int64(try database.execute(
            "INSERT INTO oauth_tokens (token_hash, app_id, IdUser, scopes, created, expires, last_used, revoked) "
                + "VALUES (?, ?, ?, ?, ?, ?, 0, 0)",
            [.text(token.hash), .int(token.appID), .int(token.userID ?? 0), .text(token.scopes.description),
             .int(token.created), .int(token.expires)]).insertID)
        if let userID = token.userID {
            do {
                try AccountRow.lock(database, userID: userID)
            } catch PhotoStoreError.accountRemoved {
                try database.execute("DELETE FROM oauth_tokens WHERE id = ?", [.int(id)]) // outside a transaction: at once
                throw PhotoStoreError.accountRemoved
            }
        }
        return id
    }

    /// The user's row joined: a token outlives no account.
    public func token(hash: String) throws -> StoredAccessToken? {
        guard let row = try database.query(
            "SELECT t.id, t.app_id, t.IdUser, t.scopes, t.created, t.expires, t.last_used, t.revoked, l.IdUser AS account "
                + "FROM oauth_tokens t LEFT JOIN login l ON (l.IdUser = t.IdUser) WHERE t.token_hash = ?",
            [.text(hash)]).first,
              let id = row.int64("id"), let appID = row.int64("app_id"), let userID = row.int64("IdUser") else { return nil }
        guard userID == 0 || row.int64("account") != nil else { return nil }
        return StoredAccessToken(id: id, appID: appID, userID: userID == 0 ? nil : userID, scopes: Self.scopes(row),
                                 created: row.int64("created") ?? 0, expires: row.int64("expires") ?? 0,
                                 lastUsed: row.int64("last_used") ?? 0, revoked: row.int64("revoked") ?? 0)
    }

    public func noteUse(tokenID: Int64, at now: Int64) throws {
        try database.execute("UPDATE oauth_tokens SET last_used = ? WHERE id = ?", [.int(now), .int(tokenID)])
    }

    public func revokeToken(hash: String, appID: Int64, at now: Int64) throws -> Bool {
        try database.execute("UPDATE oauth_tokens SET revoked = ? WHERE token_hash = ? AND app_id = ? AND revoked = 0",
                             [.int(now), .text(hash), .int(appID)]).affectedRows == 1
    }

    public func revokeTokens(userID: Int64, appID: Int64, at now: Int64) throws -> Int {
        Int(try database.execute("UPDATE oauth_tokens SET revoked = ? WHERE IdUser = ? AND app_id = ? AND revoked = 0",
                                 [.int(now), .int(userID), .int(appID)]).affectedRows)
    }

    /// Migration 014's index of tokens by app, which the sweep names: without
    /// it the sweep removes nothing rather than read whole tables.
    static let sweepIndex = "app_id"
    /// What the sweep leaves: whatever changed within a day.
    static let sweepAgeSeconds: Int64 = 86_400
    /// Rows of each kind one sweep removes at most (a table grown long
    /// empties over several sweeps, each statement short).
    static let sweepBatch = 10_000

    /// Removes apps registered over a day ago that signed no one in (no
    /// person's token, no code: anyone may register one without an account,
    /// and each holds up to 10 KB) with their own tokens (`client_credentials`,
    /// which never expire) unless one was used within the day, and tokens
    /// revoked or expired over a day ago (codes go as new ones are made,
    /// `addCode`): how many of each. Without the first, one app token kept
    /// every app an attacker registered for ever.
    /// `DatabaseError.keyDoesNotExist` before migration 014, nothing removed.
    public func sweep(now: Int64) throws(DatabaseError) -> (apps: Int, tokens: Int) {
        let before = [DatabaseValue.int(now - Self.sweepAgeSeconds)]
        let idleAppTokens = try database.execute(
            "DELETE FROM oauth_tokens WHERE IdUser = 0 AND GREATEST(created, last_used) < ? "
                + "AND NOT EXISTS (SELECT 1 FROM oauth_tokens person FORCE INDEX (\(Self.sweepIndex)) "
                + "WHERE person.app_id = oauth_tokens.app_id AND person.IdUser <> 0) "
                + "AND NOT EXISTS (SELECT 1 FROM oauth_codes FORCE INDEX (app_id) WHERE app_id = oauth_tokens.app_id) "
                + "LIMIT \(Self.sweepBatch)", before).affectedRows
        let apps = try database.execute(
            "DELETE FROM oauth_apps WHERE created < ? "
                + "AND NOT EXISTS (SELECT 1 FROM oauth_tokens FORCE INDEX (\(Self.sweepIndex)) WHERE app_id = oauth_apps.id) "
                + "AND NOT EXISTS (SELECT 1 FROM oauth_codes FORCE INDEX (app_id) WHERE app_id = oauth_apps.id) "
                + "LIMIT \(Self.sweepBatch)", before).affectedRows
        let revoked = try database.execute("DELETE FROM oauth_tokens WHERE revoked BETWEEN 1 AND ? LIMIT \(Self.sweepBatch)",
                                           before).affectedRows
        let expired = try database.execute("DELETE FROM oauth_tokens WHERE expires BETWEEN 1 AND ? LIMIT \(Self.sweepBatch)",
                                           before).affectedRows
        return (Int(apps), Int(idleAppTokens + revoked + expired))
    }

    public func forget(userID: Int64) throws {
        guard userID > 0 else { return } // 0 is every app's own token
        try database.execute("DELETE FROM oauth_tokens WHERE IdUser = ?", [.int(userID)])
        try database.execute("DELETE FROM oauth_codes WHERE IdUser = ?", [.int(userID)])
    }

    public func authorizedApps(userID: Int64, at now: Int64) throws -> [AuthorizedApp] {
        // One row per live token (a person has a few), folded here: scopes
        // are sets, which SQL would only concatenate.
        let rows = try database.query(
            "SELECT a.id, a.name, a.website, t.scopes, t.created, t.last_used FROM oauth_tokens t "
                + "JOIN oauth_apps a ON (a.id = t.app_id) WHERE t.IdUser = ? AND t.revoked = 0 AND (t.expires = 0 OR t.expires > ?) "
                + "ORDER BY t.created DESC, t.id DESC",
            [.int(userID), .int(now)])
        var apps: [AuthorizedApp] = []
        for row in rows {
            guard let id = row.int64("id") else { continue }
            let created = row.int64("created") ?? 0, lastUsed = row.int64("last_used") ?? 0
            if let index = apps.firstIndex(where: { $0.appID == id }) {
                apps[index].scopes = apps[index].scopes.union(Self.scopes(row))
                apps[index].authorized = min(apps[index].authorized, created)
                apps[index].lastUsed = max(apps[index].lastUsed, lastUsed)
            } else {
                apps.append(AuthorizedApp(appID: id, name: Self.text(row["name"]), website: Self.text(row["website"]),
                                          scopes: Self.scopes(row), authorized: created, lastUsed: lastUsed))
            }
        }
        return apps
    }

    public func addCode(_ code: AuthorizationCode, at now: Int64) throws {
        try database.execute("DELETE FROM oauth_codes WHERE expires <= ?", [.int(now)])
        try database.execute(
            "INSERT INTO oauth_codes (code_hash, app_id, IdUser, redirect_uri, scopes, code_challenge, code_challenge_method, "
                + "expires, token_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)",
            [.text(code.hash), .int(code.appID), .int(code.userID), .text(code.redirectURI), .text(code.scopes.description),
             .text(code.challenge ?? ""), .text(code.challengeMethod?.rawValue ?? ""), .int(code.expires)])
    }

    public func redeemCode(hash: String, at now: Int64, issue: (AuthorizationCode) -> NewAccessToken?) throws -> CodeRedemption {
        try database.retryingTransaction { () throws -> CodeRedemption in
            guard let row = try database.query(
                "SELECT app_id, IdUser, redirect_uri, scopes, code_challenge, code_challenge_method, expires, token_id "
                    + "FROM oauth_codes WHERE code_hash = ? FOR UPDATE", [.text(hash)]).first,
                  let appID = row.int64("app_id"), let userID = row.int64("IdUser"), let expires = row.int64("expires"),
                  let tokenID = row.int64("token_id") else { return .invalid }
            if tokenID != 0 {
                let revoked = try database.execute("UPDATE oauth_tokens SET revoked = ? WHERE id = ? AND revoked = 0",
                                                   [.int(now), .int(tokenID)])
                return .replayed(revokedToken: revoked.affectedRows == 1)
            }
            guard expires > now else { return .invalid }
            let challenge = Self.text(row["code_challenge"])
            let code = AuthorizationCode(hash: hash, appID: appID, userID: userID, redirectURI: Self.text(row["redirect_uri"]),
                                         scopes: Self.scopes(row), challenge: challenge.isEmpty ? nil : challenge,
                                         challengeMethod: PKCEMethod(rawValue: Self.text(row["code_challenge_method"])),
                                         expires: expires)
            guard let token = issue(code) else { return .refused }
            let issued = try insert(token)
            try database.execute("UPDATE oauth_codes SET token_id = ? WHERE code_hash = ?", [.int(issued), .text(hash)])
            return .issued(tokenID: issued, code: code)
        }
    }

    private static func app(_ row: Row) -> OAuthApp? {
        guard let id = row.int64("id"), let created = row.int64("created") else { return nil }
        return OAuthApp(id: id, clientID: text(row["client_id"]), secretHash: text(row["secret_hash"]), name: text(row["name"]),
                        website: text(row["website"]),
                        redirectURIs: text(row["redirect_uris"]).split(separator: "\n").map(String.init),
                        scopes: scopes(row), created: created)
    }

    private static func scopes(_ row: Row) -> OAuthScopes { OAuthScopes(parsing: text(row["scopes"])) ?? OAuthScopes([]) }

    private static func text(_ bytes: [UInt8]?) -> String { String(decoding: bytes ?? [], as: UTF8.self) }
}

extension DatabaseValue {
    static func text(_ text: String) -> DatabaseValue { .bytes(Array(text.utf8)) }
}
