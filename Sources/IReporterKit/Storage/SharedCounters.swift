/// Counters that every process serving the installation must see alike:
/// failures and events per key (login throttling, upload limits) and the
/// stream's change generation (read-your-writes of the stream cache).
/// A store on another host (Redis) throws when it cannot be reached; the
/// host-local ones never do.
///
/// Times are instants of the store's own `clock` (to the millisecond): the
/// methods without `at:` read it, a test steps a `ManualClock` given to the
/// store instead of sleeping.
public protocol SharedCounters: AnyObject, Sendable {
    /// The clock the store counts at: one that does not jump and that every
    /// process sharing the store reads alike.
    var clock: any TimeSource { get }
    /// Milliseconds until `key` may try again: it is blocked, or it cannot
    /// be counted now (a full table fails closed rather than forget a block).
    func blockedMillis(_ key: String, at now: Instant) throws -> Int64?
    /// Counts an attempt (a failed login, a registration) and returns the
    /// count, 0 if it could not be counted. `threshold` attempts an hour are
    /// forgotten again; from the `threshold`-th on, blocks `key` for 1, 2,
    /// 4, … seconds, never longer than `maxBlockSeconds`.
    @discardableResult
    func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, at now: Instant) throws -> Int64
    /// Takes one attempt back (a block in force stays).
    func forgive(_ key: String, at now: Instant) throws
    /// Forgets `key`; returns the count it had.
    @discardableResult
    func reset(_ key: String) throws -> Int64
    /// Counts one event in a fixed window; refused once `limit` events
    /// happened in the current `windowSeconds` (or it cannot be counted now).
    func use(_ key: String, limit: Int64, windowSeconds: Int64, at now: Instant) throws -> WindowUse
    /// Changes whenever a photo is added through any process (and whenever
    /// anything else a worker keeps changes: an access token's revocation).
    var streamGeneration: Int64 { get throws }
    func bumpStreamGeneration() throws
}

extension SharedCounters {
    public func blockedMillis(_ key: String) throws -> Int64? { try blockedMillis(key, at: clock.now) }
    @discardableResult
    public func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64) throws -> Int64 {
        try recordFailure(key, threshold: threshold, maxBlockSeconds: maxBlockSeconds, at: clock.now)
    }
    /// After a change is committed: a failure to bump is logged, not
    /// answered (the change stands; streams show it within `stream_cache_ms`).
    public func noteStreamChanged() {
        do { try bumpStreamGeneration() } catch { Log.error("stream generation: \(error)") }
    }
    /// After an access token is revoked: the workers' kept tokens are
    /// checked against the stream generation (`OAuthAccessTokens`). A
    /// failure to bump is logged: the revocation stands in the database.
    public func noteGrantsRevoked() {
        do { try bumpStreamGeneration() } catch { Log.error("stream generation (a token revoked): \(error)") }
    }
    public func forgive(_ key: String) throws { try forgive(key, at: clock.now) }
    public func use(_ key: String, limit: Int64, windowSeconds: Int64) throws -> WindowUse {
        try use(key, limit: limit, windowSeconds: windowSeconds, at: clock.now)
    }
    /// `use`, whether it was allowed.
    public func allow(_ key: String, limit: Int64, windowSeconds: Int64, at now: Instant) throws -> Bool {
        try use(key, limit: limit, windowSeconds: windowSeconds, at: now).allowed
    }
    public func allow(_ key: String, limit: Int64, windowSeconds: Int64) throws -> Bool {
        try allow(key, limit: limit, windowSeconds: windowSeconds, at: clock.now)
    }
}

/// A wait as an answer says it: whole seconds, rounded up (a block with
/// 1 ms left is "1 seconds", never 0 while it lasts).
func wholeSecondsRoundedUp(_ millis: Int64) -> Int64 { (millis + 999) / 1000 }
