/// The access tokens `OAuthServer` issued, as the Mastodon router checks
/// them: found by their hash, valid while neither revoked nor expired.
///
/// Each worker keeps the live tokens it found (at most `capacity`), so an
/// app's every request does not cost a query: a kept token is trusted
/// while the shared generation it was read under stands (every revocation,
/// through any process or host, bumps it: `noteGrantsRevoked`), until it
/// expires, and for at most `maxAgeMillis` (a revocation whose bump was
/// lost, Redis out of reach, still shows within it); its use is still
/// recorded once an hour. Unknown tokens are never kept (a client guessing
/// tokens would only fill the cache).
public final class OAuthAccessTokens: AccessTokens {
    static let capacity = 4096
    static let maxAgeMillis: Int64 = 60_000

    private struct Kept {
        var token: StoredAccessToken
        let keptAt: Int64
    }

    private let server: OAuthServer
    private let counters: any SharedCounters
    private let clock: any TimeSource
    private var kept: [String: Kept] = [:]
    private var generation: Int64 = -1

    public init(server: OAuthServer, counters: any SharedCounters, clock: any TimeSource = MonotonicClock()) {
        self.server = server
        self.counters = counters
        self.clock = clock
    }

    public func grant(forToken token: [UInt8]) throws -> AccessGrant? {
        guard !token.isEmpty, let found = try live(hash: OAuthSecret.hash(token)) else { return nil }
        return AccessGrant(userID: found.userID, appID: found.appID, scopes: found.scopes)
    }

    private func live(hash: String) throws -> StoredAccessToken? {
        // Counters out of reach (Redis down): nothing kept is trusted, nothing new kept.
        guard let now = try? counters.streamGeneration else {
            forget()
            return try server.token(hash: hash)
        }
        if now != generation {
            forget()
            generation = now
        } else if let entry = kept[hash], clock.now.millis - entry.keptAt < Self.maxAgeMillis {
            let checked = try server.checked(entry.token)
            kept[hash] = checked.map { Kept(token: $0, keptAt: entry.keptAt) }
            return checked
        }
        let found = try server.token(hash: hash)
        if let found {
            if kept.count >= Self.capacity { kept.removeAll(keepingCapacity: true) }
            kept[hash] = Kept(token: found, keptAt: clock.now.millis)
        } else {
            kept[hash] = nil
        }
        return found
    }

    private func forget() {
        kept.removeAll(keepingCapacity: true)
        generation = -1
    }
}

extension AppServices {
    /// The OAuth server over `oauth`, on the wall clock, with the token
    /// lifetime of the settings, telling the workers of revocations.
    public var oauthServer: OAuthServer {
        OAuthServer(store: oauth, clock: wallClock, tokenLifetimeSeconds: Int64(policy.oauthTokenLifetimeDays) * 86_400,
                    counters: counters)
    }
}
