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
        let now = Instant(millis: 1_000_000_000)
        // 12 failures: blocked 2^7 = 128 s (the account of the attack).
        for _ in 0..<12 { table.recordFailure("victim", threshold: 5, maxBlockSeconds: 900, at: now) }
        #expect(table.blockedMillis("victim", at: now) == 128_000)
        // 100,000 fresh keys over the next 49 s: far more than the table holds.
        for index in 0..<100_000 {
            table.recordFailure("fresh\(index)", threshold: 5, maxBlockSeconds: 900, at: now.advanced(bySeconds: Int64(index % 50)))
        }
        #expect(table.blockedMillis("victim", at: now.advanced(bySeconds: 49)) == 79_000, "still blocked, to the millisecond")
        #expect(table.blockedMillis("fresh99999", at: now.advanced(bySeconds: 49)) == nil, "fresh keys are counted, evicting each other")
        // Once the block is over, the escalation is kept: the next failure blocks for 256 s.
        for index in 0..<100_000 { table.recordFailure("later\(index)", threshold: 5, maxBlockSeconds: 900, at: now.advanced(bySeconds: 200)) }
        #expect(table.blockedMillis("victim", at: now.advanced(bySeconds: 200)) == nil)
        table.recordFailure("victim", threshold: 5, maxBlockSeconds: 900, at: now.advanced(bySeconds: 200))
        #expect(table.blockedMillis("victim", at: now.advanced(bySeconds: 200)) == 256_000)
    }

    @Test func whenOnlyBlocksAreLeftANewKeyIsRefusedUntilOneIsForgotten() {
        let table = SharedMemoryCounters(capacity: SharedMemoryCounters.probes)  // every key may take any slot
        let now = Instant(millis: 1_000_000_000)
        for index in 0..<SharedMemoryCounters.probes {
            table.recordFailure("blocked\(index)", threshold: 1, maxBlockSeconds: 60, at: now.advanced(bySeconds: Int64(index)))
        }
        // Fail closed: the newcomer waits until the first entry is forgotten (idle for an hour).
        let retryAfter: Int64 = CounterEntry.forgetAfterMillis + 1 - 100_000
        #expect(table.blockedMillis("newcomer", at: now.advanced(bySeconds: 100)) == retryAfter)
        #expect(table.recordFailure("newcomer", threshold: 5, maxBlockSeconds: 60, at: now.advanced(bySeconds: 100)) == 0)
        #expect(!table.use("newcomer", limit: 10, windowSeconds: 3600, at: now.advanced(bySeconds: 100)).allowed)
        #expect((0..<SharedMemoryCounters.probes).allSatisfy { table.blockedMillis("blocked\($0)", at: now.advanced(bySeconds: Int64($0))) == 1000 },
                "no block was forgotten")
        #expect(table.blockedMillis("newcomer", at: now.advanced(bySeconds: 3602)) == nil)
        #expect(table.use("newcomer", limit: 10, windowSeconds: 3600, at: now.advanced(bySeconds: 3602)).allowed)
    }

    @Test func anUploadLimitReachedIsABlockToo() {
        let table = SharedMemoryCounters(capacity: SharedMemoryCounters.probes)
        #expect(table.use("upload:1", limit: 1, windowSeconds: 3600, at: Instant(millis: 100_000)).allowed)
        for index in 0..<1000 { table.recordFailure("fresh\(index)", threshold: 5, maxBlockSeconds: 60, at: Instant(millis: 200_000)) }
        #expect(!table.use("upload:1", limit: 1, windowSeconds: 3600, at: Instant(millis: 300_000)).allowed, "not evicted by a flood")
    }

    @Test func countersAreSharedWithForkedWorkers() throws {
        let limiter = SharedMemoryCounters(capacity: 64)
        // One clock reading for both: the first block lasts a second, and the
        // real clock could tick past it between the worker and the check.
        let now = limiter.clock.now
        let worker = ChildProcess {
            for _ in 0..<5 { limiter.recordFailure("shared", threshold: 5, maxBlockSeconds: 60, at: now) }
            return 0
        }
        #expect(worker.wait() == 0)
        #expect(limiter.blockedMillis("shared", at: now) != nil)
    }
}
