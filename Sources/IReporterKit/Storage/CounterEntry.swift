/// One key's count and block in the shared counters, and the rules every
/// counter store applies to it (the shared-memory table keeps these values
/// as they are, the in-memory store in a dictionary, Redis as text). Times
/// are milliseconds on the store's clock (`SharedCounters.clock`): a block
/// of 1 s lasts 1000 ms, not "until the next whole second".
struct CounterEntry {
    /// An entry idle this long, and not blocking, is forgotten.
    static let forgetAfterMillis: Int64 = 3_600_000

    var count: Int64 = 0
    /// `allow`: when the window started. `recordFailure`: when the count last leaked.
    var since: Int64
    var lastEvent: Int64
    /// Until when the key is refused; 0 if it never was. Kept once the block
    /// is over: the count still says how long the next one will be.
    var blockedUntil: Int64 = 0

    init(now: Int64) {
        since = now
        lastEvent = now
    }

    /// Milliseconds the key is still refused, if it is.
    func wait(now: Int64) -> Int64? { blockedUntil > now ? blockedUntil - now : nil }

    /// Idle for an hour and blocking nothing: as good as absent.
    func isForgotten(now: Int64) -> Bool { now - lastEvent > Self.forgetAfterMillis && blockedUntil <= now }

    /// Blocks now, or blocked once and is not forgotten yet (its count is an
    /// escalation: forgetting it would give a guesser a fresh start).
    func holdsBlock(now: Int64) -> Bool { blockedUntil != 0 && !isForgotten(now: now) }

    /// When `holdsBlock` turns false if nothing happens meanwhile.
    var releasedAt: Int64 { max(blockedUntil, lastEvent + Self.forgetAfterMillis + 1) }

    /// Counts an attempt and returns the count. The count first forgets
    /// `threshold` attempts an hour (one every 3600/threshold seconds), so
    /// only a rate above `threshold` an hour is ever blocked; from the
    /// threshold on, the key is blocked for 1, 2, 4, … seconds, never longer
    /// than `maxBlockSeconds`.
    mutating func recordFailure(threshold: Int64, maxBlockSeconds: Int64, now: Int64) -> Int64 {
        let leakInterval = max(1000, Self.forgetAfterMillis / max(threshold, 1))
        let leaked = (now - since) / leakInterval
        if leaked > 0 {
            count = max(0, count - leaked)
            since = count == 0 ? now : since + leaked * leakInterval
        }
        count += 1
        lastEvent = now
        let excess = count - threshold
        if excess >= 0 { blockedUntil = now + min(Int64(1) << min(excess, 30), maxBlockSeconds) * 1000 }
        return count
    }

    /// Takes one attempt back; a block in force stays.
    mutating func forgive() { count = max(0, count - 1) }

    /// Counts one event in a fixed window: refused once `limit` events
    /// happened in the current one (the key then blocks until the window ends).
    mutating func use(limit: Int64, windowSeconds: Int64, now: Int64) -> WindowUse {
        let window = windowSeconds * 1000
        if now - since >= window {
            since = now
            count = 0
        }
        lastEvent = now
        let resetsAt = Instant(millis: since + window)
        guard count < limit else { return WindowUse(allowed: false, remaining: 0, resetsAt: resetsAt) }
        count += 1
        if count == limit { blockedUntil = since + window }
        return WindowUse(allowed: true, remaining: limit - count, resetsAt: resetsAt)
    }
}

/// One event counted in a fixed window (`SharedCounters.use`): whether it
/// was allowed, how many more the window allows, when the window ends (on
/// the counters' clock). What Mastodon's `X-RateLimit-*` headers say.
public struct WindowUse: Sendable, Equatable {
    public let allowed: Bool
    public let remaining: Int64
    public let resetsAt: Instant

    public init(allowed: Bool, remaining: Int64, resetsAt: Instant) {
        (self.allowed, self.remaining, self.resetsAt) = (allowed, remaining, resetsAt)
    }

    /// An event not counted (the store could not make room for its key): refused.
    static func uncounted(windowSeconds: Int64, now: Int64) -> WindowUse {
        WindowUse(allowed: false, remaining: 0, resetsAt: Instant(millis: now + windowSeconds * 1000))
    }
}
