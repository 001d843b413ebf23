#if canImport(Glibc)
import Glibc
#endif
import IReporterKit
import Testing

/// What every `SharedCounters` store does alike, checked on a fresh store
/// from `make`: the unit tests run it on the shared-memory table and the
/// dictionary, the integration tests on Redis.
public enum SharedCountersBehaviour {
    public static func backOffDoublesFromTheThresholdAndIsCapped(_ limiter: any SharedCounters) throws {
        let now: Int64 = 1_000_000
        for _ in 0..<4 { try limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, now: now) }
        #expect(try limiter.blockedFor("k", now: now) == nil)
        try limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, now: now)
        #expect(try limiter.blockedFor("k", now: now) == 1)
        try limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, now: now)
        #expect(try limiter.blockedFor("k", now: now) == 2)
        for _ in 0..<40 { try limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, now: now) }
        #expect(try limiter.blockedFor("k", now: now) == 900, "never longer than the cap")
        #expect(try limiter.blockedFor("k", now: now + 900) == nil, "and it ends")
        try limiter.reset("k")
        #expect(try limiter.blockedFor("k", now: now) == nil)
    }

    public static func windowsCountEvents(_ limiter: any SharedCounters) throws {
        #expect(try limiter.allow("u", limit: 2, windowSeconds: 3600, now: 100))
        #expect(try limiter.allow("u", limit: 2, windowSeconds: 3600, now: 101))
        #expect(try !limiter.allow("u", limit: 2, windowSeconds: 3600, now: 102))
        #expect(try limiter.allow("other", limit: 2, windowSeconds: 3600, now: 102))
        #expect(try limiter.allow("u", limit: 2, windowSeconds: 3600, now: 3700), "a new window")
    }

    public static func countsForgetTheirThresholdAnHour(_ limiter: any SharedCounters) throws {
        let now: Int64 = 1_000_000
        #expect(try (0..<19).map { _ in try limiter.recordFailure("n", threshold: 20, maxBlockSeconds: 900, now: now) }.last == 19)
        // One attempt leaks every 3600/20 = 180 s: nine are forgotten after 27 minutes.
        #expect(try limiter.recordFailure("n", threshold: 20, maxBlockSeconds: 900, now: now + 9 * 180) == 11)
        #expect(try limiter.blockedFor("n", now: now + 9 * 180) == nil, "a rate under the threshold is never blocked")
        #expect(try limiter.recordFailure("n", threshold: 20, maxBlockSeconds: 900, now: now + 3 * 3600) == 1)
    }

    public static func forgivingTakesOneBackAndResettingReportsTheCount(_ limiter: any SharedCounters) throws {
        let now = Int64(time(nil))
        for _ in 0..<5 { try limiter.recordFailure("f", threshold: 5, maxBlockSeconds: 900, now: now) }
        try limiter.forgive("f", now: now)
        #expect(try limiter.blockedFor("f", now: now) == 1, "a block in force stays")
        #expect(try limiter.recordFailure("f", threshold: 5, maxBlockSeconds: 900, now: now) == 5)
        try limiter.forgive("nothing", now: now)
        #expect(try limiter.reset("f") == 5)
        #expect(try limiter.reset("f") == 0)
        #expect(try limiter.blockedFor("f", now: now) == nil)
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
        ("windowsCountEvents", windowsCountEvents),
        ("countsForgetTheirThresholdAnHour", countsForgetTheirThresholdAnHour),
        ("forgivingTakesOneBackAndResettingReportsTheCount", forgivingTakesOneBackAndResettingReportsTheCount),
        ("theStreamGenerationMovesWithEveryBump", theStreamGenerationMovesWithEveryBump),
    ]
}
