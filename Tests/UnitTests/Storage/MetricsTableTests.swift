#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
@testable import IReporterKit

/// The metrics every process of an installation adds to: fixed slots found
/// by label, counted with atomics, never more series than slots.
@Suite(.serialized)
struct MetricsTableTests {
    @Test func requestsAreCountedBySeries() {
        let table = MetricsTable()
        table.countRequest(command: "stream", outcome: "ok")
        table.countRequest(command: "stream", outcome: "ok")
        table.countRequest(command: "login", outcome: "authorization-failed")
        let counted = Dictionary(uniqueKeysWithValues: table.requests.map { ("\($0.command)/\($0.outcome)", $0.count) })
        #expect(counted == ["stream/ok": 2, "login/authorization-failed": 1, "other/other": 0])
    }

    @Test func aDurationFallsInTheFirstBucketItDoesNotExceed() throws {
        let table = MetricsTable()
        for micros: Int64 in [0, 1000, 1001, 5_000_000, 5_000_001, 60_000_000] { table.observeDuration(command: "upload", micros: micros) }
        let series = try #require(table.durations.first { $0.command == "upload" })
        //                   1  2  5 10 25 50 100 250 500 1000 2500 5000 +Inf (ms)
        #expect(series.buckets == [2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2])
        #expect(series.count == 6)
        #expect(series.sumMicros == 70_002_002)
    }

    @Test func labelsTooLongAreCountedAsOther() {
        let table = MetricsTable()
        table.countRequest(command: String(repeating: "x", count: 32), outcome: "ok")
        #expect(table.requests.map(\.command) == ["other"])
        #expect(table.requests[0].count == 1)
    }

    @Test func whenEverySlotIsTakenTheRestIsCountedAsOther() {
        let table = MetricsTable()
        for index in 0..<(MetricsTable.requestSlots + 10) { table.countRequest(command: "c\(index)", outcome: "ok") }
        let requests = table.requests
        #expect(requests.count == MetricsTable.requestSlots)
        #expect(requests.first { $0.command == "other" }?.count == 11, "the 10 with no slot, and the one whose slot other holds")
        #expect(requests.reduce(0) { $0 + $1.count } == Int64(MetricsTable.requestSlots + 10))
    }

    @Test func countersAddUp() {
        let table = MetricsTable()
        table.add(.uploadBytes, 1000)
        table.add(.uploadBytes, 24)
        table.add(.loginThrottled)
        #expect(table.value(.uploadBytes) == 1024)
        #expect(table.value(.loginThrottled) == 1)
        #expect(table.value(.registrationThrottled) == 0)
    }

    @Test func processesCountingAtOnceLoseNothing() throws {
        let scratch = ScratchDirectory("metrics")
        let path = "\(scratch.path)/ireporter-shared-state"
        _ = try SharedState.open(file: path)
        // Each child claims the same new series at once, and some of its own.
        let children = (0..<6).map { child in
            ChildProcess {
                guard let state = try? SharedState.open(file: path) else { return 1 }
                for round in 0..<500 {
                    state.metrics.countRequest(command: "stream", outcome: "ok")
                    state.metrics.countRequest(command: "own\(child)", outcome: "r\(round % 5)")
                    state.metrics.observeDuration(command: "stream", micros: 3000)
                    state.metrics.add(.uploadBytes, 2)
                }
                return 0
            }
        }
        for child in children { #expect(child.wait() == 0) }
        let metrics = try SharedState.open(file: path).metrics
        let requests = metrics.requests
        #expect(requests.filter { $0.command == "stream" } == [.init(command: "stream", outcome: "ok", count: 3000)])
        #expect(requests.count == 1 + 6 * 5 + 1, "one slot per series, whoever claimed it first")
        #expect(requests.filter { $0.command.hasPrefix("own") }.allSatisfy { $0.count == 100 })
        #expect(metrics.durations.first { $0.command == "stream" }?.buckets[2] == 3000)
        #expect(metrics.value(.uploadBytes) == 6000)
    }
}
