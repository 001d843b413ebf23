import IReporterKit
import Testing

/// What every `SharedCounters` store does alike, checked on a fresh store
/// from `make`: the unit tests run it on the shared-memory table and the
/// dictionary, the integration tests on Redis.
public enum SharedCountersBehaviour {
    /// An instant `seconds` after the stores' (arbitrary) origin.
    static func at(_ seconds: Int64) -> Instant { Instant(millis: seconds * 1000) }

    public static func backOffDoublesFromTheThresholdAndIsCapped(_ limiter: any SharedCounters) throws {
        let now = at(1_000_000)
        for _ in 0..<4 { try limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, at: now) }
        #expect(try limiter.blockedMillis("k", at: now) == nil)
        try limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, at: now)
        #expect(try limiter.blockedMillis("k", at: now) == 1000)
        try limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, at: now)
        #expect(try limiter.blockedMillis("k", at: now) == 2000)
        for _ in 0..<40 { try limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, at: now) }
        #expect(try limiter.blockedMillis("k", at: now) == 900_000, "never longer than the cap")
        #expect(try limiter.blockedMillis("k", at: now.advanced(bySeconds: 900)) == nil, "and it ends")
        try limiter.reset("k")
        #expect(try limiter.blockedMillis("k", at: now) == nil)
    }

    /// A block of 1 s lasts 1000 ms from the failure, wherever in a second it
    /// began (counted in whole seconds, one begun at .999 ended 1 ms later).
    public static func aBlockLastsWhatItSaysToTheMillisecond(_ limiter: any SharedCounters) throws {
        let failedAt = at(1_000_000).advanced(byMillis: 999)
        for _ in 0..<5 { try limiter.recordFailure("b", threshold: 5, maxBlockSeconds: 900, at: failedAt) }
        #expect(try limiter.blockedMillis("b", at: failedAt.advanced(byMillis: 1)) == 999, "across the second's end")
        #expect(try limiter.blockedMillis("b", at: failedAt.advanced(byMillis: 999)) == 1)
        #expect(try limiter.blockedMillis("b", at: failedAt.advanced(byMillis: 1000)) == nil)
    }

    public static func windowsCountEvents(_ limiter: any SharedCounters) throws {
        #expect(try limiter.allow("u", limit: 2, windowSeconds: 3600, at: at(100)))
        #expect(try limiter.allow("u", limit: 2, windowSeconds: 3600, at: at(101)))
        #expect(try !limiter.allow("u", limit: 2, windowSeconds: 3600, at: at(102)))
        #expect(try limiter.allow("other", limit: 2, windowSeconds: 3600, at: at(102)))
        #expect(try !limiter.allow("u", limit: 2, windowSeconds: 3600, at: at(3700).advanced(byMillis: -1)), "to the millisecond")
        #expect(try limiter.allow("u", limit: 2, windowSeconds: 3600, at: at(3700)), "a new window")
    }

    /// What the Mastodon API's `X-RateLimit-*` headers say: the window's
    /// events left and its end.
    public static func aWindowSaysWhatIsLeftAndWhenItEnds(_ limiter: any SharedCounters) throws {
        #expect(try limiter.use("w", limit: 3, windowSeconds: 300, at: at(1000))
                == WindowUse(allowed: true, remaining: 2, resetsAt: at(1300)))
        #expect(try limiter.use("w", limit: 3, windowSeconds: 300, at: at(1100)).remaining == 1)
        #expect(try limiter.use("w", limit: 3, windowSeconds: 300, at: at(1200))
                == WindowUse(allowed: true, remaining: 0, resetsAt: at(1300)))
        #expect(try limiter.use("w", limit: 3, windowSeconds: 300, at: at(1299))
                == WindowUse(allowed: false, remaining: 0, resetsAt: at(1300)))
        #expect(try limiter.use("w", limit: 3, windowSeconds: 300, at: at(1300))
                == WindowUse(allowed: true, remaining: 2, resetsAt: at(1600)), "a new window")
    }

    public static func countsForgetTheirThresholdAnHour(_ limiter: any SharedCounters) throws {
        let now: Int64 = 1_000_000
        #expect(try (0..<19).map { _ in try limiter.recordFailure("n", threshold: 20, maxBlockSeconds: 900, at: at(now)) }.last == 19)
        // One attempt leaks every 3600/20 = 180 s: nine are forgotten after 27 minutes.
        #expect(try limiter.recordFailure("n", threshold: 20, maxBlockSeconds: 900, at: at(now + 9 * 180)) == 11)
        #expect(try limiter.blockedMillis("n", at: at(now + 9 * 180)) == nil, "a rate under the threshold is never blocked")
        #expect(try limiter.recordFailure("n", threshold: 20, maxBlockSeconds: 900, at: at(now + 3 * 3600)) == 1)
    }

    public static func forgivingTakesOneBackAndResettingReportsTheCount(_ limiter: any SharedCounters) throws {
        let now = limiter.clock.now
        for _ in 0..<5 { try limiter.recordFailure("f", threshold: 5, maxBlockSeconds: 900, at: now) }
        try limiter.forgive("f", at: now)
        #expect(try limiter.blockedMillis("f", at: now) == 1000, "a block in force stays")
        #expect(try limiter.recordFailure("f", threshold: 5, maxBlockSeconds: 900, at: now) == 5)
        try limiter.forgive("nothing", at: now)
        #expect(try limiter.reset("f") == 5)
        #expect(try limiter.reset("f") == 0)
        #expect(try limiter.blockedMillis("f", at: now) == nil)
    }

    public static func theStreamGenerationMovesWithEveryBump(_ counters: any SharedCounters) throws {
        let before = try counters.streamGeneration
        try counters.bumpStreamGeneration()
        try counters.bumpStreamGeneration()
        #expect(try counters.streamGeneration == before + 2)
    }

    /// Every check above, by name (for parameterised tests).
    public static let all: [(String, @Sendable (any SharedCounters) throws -> Void)] = [
        ("backOffDoublesFromTheThresholdAndIsCapped", backOffDoublesFromTheThresholdAndIsCapped),
        ("aBlockLastsWhatItSaysToTheMillisecond", aBlockLastsWhatItSaysToTheMillisecond),
        ("windowsCountEvents", windowsCountEvents),
        ("aWindowSaysWhatIsLeftAndWhenItEnds", aWindowSaysWhatIsLeftAndWhenItEnds),
        ("countsForgetTheirThresholdAnHour", countsForgetTheirThresholdAnHour),
        ("forgivingTakesOneBackAndResettingReportsTheCount", forgivingTakesOneBackAndResettingReportsTheCount),
        ("theStreamGenerationMovesWithEveryBump", theStreamGenerationMovesWithEveryBump),
    ]
}
