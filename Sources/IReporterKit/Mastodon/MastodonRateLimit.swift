/// Mastodon's rate limit (docs.joinmastodon.org/api/rate-limits): so many
/// requests in 5 minutes per account, whichever of its tokens they carry,
/// or per network for the others: without a valid token, or with an app's
/// own (client credentials), which anyone may make as many of as they like
/// (`mastodon_rate_limit`, 300). Counted in the shared counters (every worker
/// and host alike), told in `X-RateLimit-Limit`, `-Remaining` and `-Reset`
/// (when the window ends, ISO 8601), and 429 past it. A network's signing
/// in (the app's registration, the authorization page, the token and its
/// revocation) has a count of its own, as Mastodon leaves `/oauth` out of
/// its API limit: anonymous reads from the same network (another app's
/// timelines, image loaders) never lock its people out of signing in.
/// (Its password is `login`'s throttle's besides.)
struct MastodonRateLimit {
    static let windowSeconds: Int64 = 300
    static let exceeded = MastodonError(status: 429, message: "Too many requests")

    let counters: any SharedCounters
    /// 0: no limit.
    let limit: Int
    let wallClock: any WallClock

    /// Counts the request; its headers, and whether it may go on.
    func use(_ request: MastodonRequest, grant: AccessGrant?) throws -> (allowed: Bool, headers: [(name: String, value: String)]) {
        guard limit > 0 else { return (true, []) }
        let key = if let user = grant?.userID {
            "mastodon-user:\(user)"
        } else if Self.signsIn(request.path) {
            "mastodon-signin:\(ClientNetwork(address: request.clientAddress))"
        } else {
            "mastodon-network:\(ClientNetwork(address: request.clientAddress))"
        }
        let use = try counters.use(key, limit: Int64(limit), windowSeconds: Self.windowSeconds)
        let resetsIn = max(0, use.resetsAt.millis(since: counters.clock.now))
        let reset = MastodonTime.iso8601(wallClock.unixSeconds + wholeSecondsRoundedUp(resetsIn))
        return (use.allowed, [("X-RateLimit-Limit", String(limit)), ("X-RateLimit-Remaining", String(use.remaining)),
                              ("X-RateLimit-Reset", reset)])
    }

    /// `/oauth/...` and `/api/v1/apps`, by segments as the router matches them.
    static func signsIn(_ path: String) -> Bool {
        let segments = MastodonRouter.segments(of: path)
        return segments.first == "oauth" || segments.starts(with: ["api", "v1", "apps"])
    }
}
