import Synchronization
import Testing
@testable import IReporterKit

/// The time every host counts at in Redis, on a `TIME` the test answers.
struct RedisServerClockTests {
    /// Redis's answer to `TIME` in milliseconds; nil: Redis cannot be reached.
    final class FakeRedisTime: Sendable {
        let millis = Mutex<Int64?>(nil)
        func read() throws -> Int64 {
            guard let millis = millis.withLock({ $0 }) else { throw RedisError(code: .unexpectedReply, message: "down") }
            return millis
        }
    }

    /// Redis down as a worker starts: this host's clock for now, asked again
    /// a second later, and Redis's time from then on even behind the host's
    /// (kept as a floor, a host clock ahead stopped the worker's time).
    @Test func theHostsClockBeforeAnyReadingIsLeftBehindByTheFirst() {
        let local = ManualClock(), redis = FakeRedisTime()
        let clock = RedisServerClock(local: local, readServer: redis.read)
        let hosts = clock.now.millis
        redis.millis.withLock { $0 = hosts - 60_000 }  // Redis back, its clock a minute behind this host's
        local.advance(byMillis: RedisServerClock.retryMillis - 1)
        #expect(clock.now.millis == hosts + RedisServerClock.retryMillis - 1, "not asked again within the second")
        local.advance(byMillis: 1)
        #expect(clock.now.millis == hosts - 60_000, "Redis's time, once it answers")
        local.advance(byMillis: 500)
        #expect(clock.now.millis == hosts - 60_000 + 500, "and on from there")
    }

    /// Once Redis has answered, its reading goes on through an outage and
    /// the time never goes back.
    @Test func aReadingGoesOnWhileRedisIsDownAndNeverBack() {
        let local = ManualClock(), redis = FakeRedisTime()
        redis.millis.withLock { $0 = 1_000_000 }
        let clock = RedisServerClock(local: local, readServer: redis.read)
        #expect(clock.now.millis == 1_000_000)
        redis.millis.withLock { $0 = nil }
        local.advance(byMillis: RedisServerClock.rereadMillis)
        #expect(clock.now.millis == 1_000_000 + RedisServerClock.rereadMillis)
        redis.millis.withLock { $0 = 900_000 }
        local.advance(byMillis: RedisServerClock.rereadMillis)
        #expect(clock.now.millis == 1_000_000 + RedisServerClock.rereadMillis, "a reading behind the last answer does not take it back")
    }
}
