#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
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

    @Test(arguments: 0..<stores.count) func countsForgetTheirThresholdAnHour(store: Int) {
        let limiter = Self.stores[store]()
        let now: Int64 = 1_000_000
        #expect((0..<19).map { _ in limiter.recordFailure("n", threshold: 20, maxBlockSeconds: 900, now: now) }.last == 19)
        // One attempt leaks every 3600/20 = 180 s: nine are forgotten after 27 minutes.
        #expect(limiter.recordFailure("n", threshold: 20, maxBlockSeconds: 900, now: now + 9 * 180) == 11)
        #expect(limiter.blockedFor("n", now: now + 9 * 180) == nil, "a rate under the threshold is never blocked")
        #expect(limiter.recordFailure("n", threshold: 20, maxBlockSeconds: 900, now: now + 3 * 3600) == 1)
    }

    @Test(arguments: 0..<stores.count) func forgivingTakesOneBackAndResettingReportsTheCount(store: Int) {
        let limiter = Self.stores[store]()
        let now = Int64(time(nil))
        for _ in 0..<5 { limiter.recordFailure("f", threshold: 5, maxBlockSeconds: 900, now: now) }
        limiter.forgive("f", now: now)
        #expect(limiter.blockedFor("f", now: now) == 1, "a block in force stays")
        #expect(limiter.recordFailure("f", threshold: 5, maxBlockSeconds: 900, now: now) == 5)
        limiter.forgive("nothing", now: now)
        #expect(limiter.reset("f") == 5)
        #expect(limiter.reset("f") == 0)
        #expect(limiter.blockedFor("f", now: now) == nil)
    }

    @Test func aFloodOfFreshKeysNeverWipesABlock() {
        let table = SharedMemoryCounters(capacity: 64)
        let now: Int64 = 1_000_000
        // 12 failures: blocked 2^7 = 128 s (the account of the attack).
        for _ in 0..<12 { table.recordFailure("victim", threshold: 5, maxBlockSeconds: 900, now: now) }
        #expect(table.blockedFor("victim", now: now) == 128)
        // 100,000 fresh keys over the next 49 s: far more than the table holds.
        for index in 0..<100_000 {
            table.recordFailure("fresh\(index)", threshold: 5, maxBlockSeconds: 900, now: now + Int64(index % 50))
        }
        #expect(table.blockedFor("victim", now: now + 49) == 79, "still blocked, to the second")
        #expect(table.blockedFor("fresh99999", now: now + 49) == nil, "fresh keys are counted, evicting each other")
        // Once the block is over, the escalation is kept: the next failure blocks for 256 s.
        for index in 0..<100_000 { table.recordFailure("later\(index)", threshold: 5, maxBlockSeconds: 900, now: now + 200) }
        #expect(table.blockedFor("victim", now: now + 200) == nil)
        table.recordFailure("victim", threshold: 5, maxBlockSeconds: 900, now: now + 200)
        #expect(table.blockedFor("victim", now: now + 200) == 256)
    }

    @Test func whenOnlyBlocksAreLeftANewKeyIsRefusedUntilOneIsForgotten() {
        let table = SharedMemoryCounters(capacity: SharedMemoryCounters.probes)  // every key may take any slot
        let now: Int64 = 1_000_000
        for index in 0..<SharedMemoryCounters.probes {
            table.recordFailure("blocked\(index)", threshold: 1, maxBlockSeconds: 60, now: now + Int64(index))
        }
        // Fail closed: the newcomer waits until the first entry is forgotten (idle for an hour).
        let retryAfter: Int64 = CounterEntry.forgetAfterSeconds + 1 - 100
        #expect(table.blockedFor("newcomer", now: now + 100) == retryAfter)
        #expect(table.recordFailure("newcomer", threshold: 5, maxBlockSeconds: 60, now: now + 100) == 0)
        #expect(!table.allow("newcomer", limit: 10, windowSeconds: 3600, now: now + 100))
        #expect((0..<SharedMemoryCounters.probes).allSatisfy { table.blockedFor("blocked\($0)", now: now + Int64($0)) == 1 },
                "no block was forgotten")
        #expect(table.blockedFor("newcomer", now: now + 3602) == nil)
        #expect(table.allow("newcomer", limit: 10, windowSeconds: 3600, now: now + 3602))
    }

    @Test func anUploadLimitReachedIsABlockToo() {
        let table = SharedMemoryCounters(capacity: SharedMemoryCounters.probes)
        #expect(table.allow("upload:1", limit: 1, windowSeconds: 3600, now: 100))
        for index in 0..<1000 { table.recordFailure("fresh\(index)", threshold: 5, maxBlockSeconds: 60, now: 200) }
        #expect(!table.allow("upload:1", limit: 1, windowSeconds: 3600, now: 300), "not evicted by a flood")
    }

    @Test func countersAreSharedWithForkedWorkers() {
        let limiter = SharedMemoryCounters(capacity: 64)
        let worker = ChildProcess {
            for _ in 0..<5 { limiter.recordFailure("shared", threshold: 5, maxBlockSeconds: 60) }
            return 0
        }
        #expect(worker.wait() == 0)
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
