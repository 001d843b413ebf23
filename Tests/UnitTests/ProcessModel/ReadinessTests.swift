@testable import IReporterKit
import Testing

struct ReadinessTests {
    final class Service {
        var down: String?
        var asked = 0
    }

    @Test func readyUntilAServiceIsDownAndThenNamedWithWhatWentWrong() {
        let database = Service(), redis = Service()
        var now: Int64 = 0
        let readiness = Readiness(probes: [
            .init(name: "database") { database.asked += 1; return database.down },
            .init(name: "redis") { redis.asked += 1; return redis.down },
        ], now: { now })
        #expect(readiness.failures().isEmpty)
        database.down = "Can't connect to server on '127.0.0.1' (111)"
        now += Readiness.keptMillis
        #expect(readiness.failures() == ["database: Can't connect to server on '127.0.0.1' (111)"])
        redis.down = "connection refused"
        now += Readiness.keptMillis
        #expect(readiness.failures() == ["database: Can't connect to server on '127.0.0.1' (111)", "redis: connection refused"])
    }

    @Test func aBalancersPollingAsksEachServiceOnceASecond() {
        let database = Service()
        var now: Int64 = 5000
        let readiness = Readiness(probes: [.init(name: "database") { database.asked += 1; return database.down }], now: { now })
        for _ in 0..<20 { _ = readiness.failures() }
        #expect(database.asked == 1)
        database.down = "gone"
        now += Readiness.keptMillis - 1
        #expect(readiness.failures().isEmpty, "kept for a second")
        now += 1
        #expect(readiness.failures() == ["database: gone"])
        #expect(database.asked == 2)
    }
}
