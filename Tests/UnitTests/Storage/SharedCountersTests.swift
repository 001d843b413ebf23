#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
@testable import IReporterKit

/// Both host-local counter stores follow the same rules: the shared-memory
/// table the workers use and the dictionary the App's unit tests use; and
/// the table's own: bounded, it never forgets a block.
struct SharedCountersTests {
    static let stores: [@Sendable () -> any SharedCounters] = [{ SharedMemoryCounters(capacity: 64) }, { InMemoryCounters() }]

    /// The rules every store follows (Redis's too: RedisIntegrationTests).
    @Test(arguments: 0..<stores.count, SharedCountersBehaviour.all.indices)
    func everyStoreFollowsTheRules(store: Int, check: Int) throws {
        try SharedCountersBehaviour.all[check].1(Self.stores[store]())
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

    @Test func countersAreSharedWithForkedWorkers() throws {
        let limiter = SharedMemoryCounters(capacity: 64)
        // One clock reading for both: the first block lasts a second, and the
        // real clock could tick past it between the worker and the check.
        let now = limiter.currentTime
        let worker = ChildProcess {
            for _ in 0..<5 { limiter.recordFailure("shared", threshold: 5, maxBlockSeconds: 60, now: now) }
            return 0
        }
        #expect(worker.wait() == 0)
        #expect(limiter.blockedFor("shared", now: now) != nil)
    }
}
