#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit

/// Both counter stores follow the same rules: the shared-memory table the
/// workers use and the dictionary the App's unit tests use.
struct SharedCountersTests {
    static let stores: [@Sendable () -> any SharedCounters] = [{ SharedMemoryCounters(capacity: 64) }, { InMemoryCounters() }]

    @Test(arguments: 0..<stores.count) func backOffDoublesFromTheThresholdAndIsCapped(store: Int) {
        let limiter = Self.stores[store]()
        let now: Int64 = 1_000_000
        for _ in 0..<4 { limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, now: now) }
        #expect(limiter.blockedFor("k", now: now) == nil)
        limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, now: now)
        #expect(limiter.blockedFor("k", now: now) == 1)
        limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, now: now)
        #expect(limiter.blockedFor("k", now: now) == 2)
        for _ in 0..<40 { limiter.recordFailure("k", threshold: 5, maxBlockSeconds: 900, now: now) }
        #expect(limiter.blockedFor("k", now: now) == 900, "never longer than the cap")
        #expect(limiter.blockedFor("k", now: now + 900) == nil, "and it ends")
        limiter.reset("k")
        #expect(limiter.blockedFor("k", now: now) == nil)
    }

    @Test(arguments: 0..<stores.count) func windowsCountEvents(store: Int) {
        let limiter = Self.stores[store]()
        #expect(limiter.allow("u", limit: 2, windowSeconds: 3600, now: 100))
        #expect(limiter.allow("u", limit: 2, windowSeconds: 3600, now: 101))
        #expect(!limiter.allow("u", limit: 2, windowSeconds: 3600, now: 102))
        #expect(limiter.allow("other", limit: 2, windowSeconds: 3600, now: 102))
        #expect(limiter.allow("u", limit: 2, windowSeconds: 3600, now: 3700), "a new window")
    }

    @Test func aFullTableRecyclesInsteadOfGrowing() {
        let limiter = SharedMemoryCounters(capacity: 16)
        for index in 0..<1000 { limiter.recordFailure("key\(index)", threshold: 1, maxBlockSeconds: 60, now: Int64(index)) }
        #expect(limiter.blockedFor("key999", now: 999) != nil)
    }

    @Test func countersAreSharedWithForkedWorkers() {
        let limiter = SharedMemoryCounters(capacity: 64)
        let pid = fork()
        if pid == 0 {
            for _ in 0..<5 { limiter.recordFailure("shared", threshold: 5, maxBlockSeconds: 60) }
            _exit(0)
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(limiter.blockedFor("shared") != nil)
    }

    @Test(arguments: 0..<stores.count) func theStreamGenerationMovesWithEveryBump(store: Int) {
        let counters = Self.stores[store]()
        let before = counters.streamGeneration
        counters.bumpStreamGeneration()
        counters.bumpStreamGeneration()
        #expect(counters.streamGeneration == before + 2)
    }
}
