#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The installation's metrics (the status page's `?openmetrics`), in memory
/// every process shares (`SharedState`'s file), so that a worker replaced
/// after `max_requests`, a mod_fcgid process or a CGI process adds to the
/// same figures. Fixed size, atomics only: no lock is ever held, so a
/// process killed mid-request leaves nothing to wait for.
///
/// Plain counters sit at fixed places (`Counter`). Requests are counted by
/// (command, outcome) and their durations by command, each series in a slot
/// found by its labels' hash; a slot is taken once, for good, by a compare-
/// and-swap, and its labels written before it is marked ready. The labels
/// are a bounded set chosen by the server (`RequestMetrics`), never a
/// client's text; should the slots still run out, the rest is counted under
/// `other`.
public final class MetricsTable: @unchecked Sendable {
    /// The counters without labels of their own (the label is in the name).
    public enum Counter: Int, CaseIterable, Sendable {
        case uploadBytes = 0
        case loginThrottled, registrationThrottled
        case databaseConnectionErrors, databaseRetryableErrors, databaseOtherErrors
        case redisConnectionErrors, redisReplyErrors, redisOtherErrors
        case s3TransferErrors, s3StatusErrors
        case streamChangesUnconfirmed
        case livePublishFailures
    }

    /// Upper bounds of the duration histogram's buckets, in milliseconds (then +Inf).
    public static let bucketMillis: [Int64] = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000]
    /// The longest command or outcome label kept as it is (bytes).
    public static let maxLabelBytes = 31
    static let requestSlots = 512
    static let durationSlots = 128

    private static let counterWords = 32
    /// state, 8 words of labels (command and outcome, 32 bytes each), the count
    /// (or the sum of durations in microseconds), the buckets; padded.
    private static let slotWords = 24
    private enum SlotState: CLongLong { case empty = 0, claiming, ready }
    private static let labelWord = 1, valueWord = 9, bucketWord = 10

    /// Bytes the table takes.
    public static let bytes = (counterWords + (requestSlots + durationSlots) * slotWords) * 8

    private let words: UnsafeMutablePointer<CLongLong>

    /// The table at `memory` (`bytes`, zeroed when new): set up when `initialize`.
    init(memory: UnsafeMutableRawPointer, initialize: Bool) {
        words = memory.bindMemory(to: CLongLong.self, capacity: Self.bytes / 8)
        if initialize {
            // The overflow series exist from the start: counting never fails.
            _ = slot(.requests, command: "other", outcome: "other", claiming: true)
            _ = slot(.durations, command: "other", outcome: "", claiming: true)
        }
    }

    /// A table in memory shared with the processes this one forks.
    public convenience init() {
        self.init(memory: sharedMemory(bytes: Self.bytes, for: "metrics"), initialize: true)
    }

    // MARK: - counting

    public func add(_ counter: Counter, _ amount: Int64 = 1) {
        _ = csystem_add(words + counter.rawValue, CLongLong(amount))
    }

    public func value(_ counter: Counter) -> Int64 { Int64(csystem_load(words + counter.rawValue)) }

    /// One request (or JSON-RPC call) of `command` that ended in `outcome`.
    public func countRequest(command: String, outcome: String) {
        guard let slot = slot(.requests, command: command, outcome: outcome, claiming: true)
            ?? slot(.requests, command: "other", outcome: "other", claiming: false) else { return }
        _ = csystem_add(slot + Self.valueWord, 1)
    }

    /// A request of `command` that took `micros`.
    public func observeDuration(command: String, micros: Int64) {
        guard let slot = slot(.durations, command: command, outcome: "", claiming: true)
            ?? slot(.durations, command: "other", outcome: "", claiming: false) else { return }
        let bucket = Self.bucketMillis.firstIndex { micros <= $0 * 1000 } ?? Self.bucketMillis.count
        _ = csystem_add(slot + Self.bucketWord + bucket, 1)
        _ = csystem_add(slot + Self.valueWord, CLongLong(max(0, micros)))
    }

    // MARK: - reading

    public struct RequestSeries: Equatable, Sendable {
        public var command: String, outcome: String, count: Int64
    }

    public struct DurationSeries: Equatable, Sendable {
        public var command: String
        /// Requests in each bucket alone (not cumulative): `bucketMillis`' then +Inf.
        public var buckets: [Int64]
        public var sumMicros: Int64
        public var count: Int64 { buckets.reduce(0, +) }
    }

    /// Every (command, outcome) counted so far, in slot order.
    public var requests: [RequestSeries] {
        readySlots(.requests).map { slot, command, outcome in
            RequestSeries(command: command, outcome: outcome, count: Int64(csystem_load(slot + Self.valueWord)))
        }
    }

    /// Every command timed so far, in slot order.
    public var durations: [DurationSeries] {
        readySlots(.durations).map { slot, command, _ in
            DurationSeries(command: command,
                           buckets: (0...Self.bucketMillis.count).map { Int64(csystem_load(slot + Self.bucketWord + $0)) },
                           sumMicros: Int64(csystem_load(slot + Self.valueWord)))
        }
    }

    // MARK: - slots

    private enum Region {
        case requests, durations
        var first: Int { switch self { case .requests: 0; case .durations: MetricsTable.requestSlots } }
        var count: Int { switch self { case .requests: MetricsTable.requestSlots; case .durations: MetricsTable.durationSlots } }
    }

    private func slotPointer(_ region: Region, _ index: Int) -> UnsafeMutablePointer<CLongLong> {
        words + Self.counterWords + (region.first + index) * Self.slotWords
    }

    /// The labels as the slot holds them: command and outcome, NUL-padded to 32 bytes each.
    private static func labelBytes(command: String, outcome: String) -> [UInt8]? {
        let command = Array(command.utf8), outcome = Array(outcome.utf8)
        guard command.count <= maxLabelBytes, outcome.count <= maxLabelBytes,
              !command.contains(0), !outcome.contains(0) else { return nil }
        return command + [UInt8](repeating: 0, count: 32 - command.count) + outcome + [UInt8](repeating: 0, count: 32 - outcome.count)
    }

    private func labels(of slot: UnsafeMutablePointer<CLongLong>) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: slot + Self.labelWord, count: 64))
    }

    /// The series' slot: found, or taken when `claiming`; nil when the
    /// labels are too long or every slot is another series'.
    private func slot(_ region: Region, command: String, outcome: String, claiming: Bool) -> UnsafeMutablePointer<CLongLong>? {
        guard let wanted = Self.labelBytes(command: command, outcome: outcome) else { return nil }
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in wanted {
            hash ^= UInt64(byte)
            hash = hash &* 0x100000001b3
        }
        let start = Int(hash % UInt64(region.count))
        for probe in 0..<region.count {
            let slot = slotPointer(region, (start + probe) % region.count)
            var state = csystem_load(slot)
            if state == SlotState.empty.rawValue {
                guard claiming else { return nil }
                if csystem_compare_exchange(slot, SlotState.empty.rawValue, SlotState.claiming.rawValue) != 0 {
                    wanted.withUnsafeBytes { UnsafeMutableRawPointer(slot + Self.labelWord).copyMemory(from: $0.baseAddress!, byteCount: 64) }
                    csystem_store(slot, SlotState.ready.rawValue)
                    return slot
                }
                state = csystem_load(slot)
            }
            // Another process is writing this slot's labels: a few stores
            // away from ready. One killed right then leaves it unusable, so
            // the wait is bounded and the search goes on past it.
            var spins = 0
            while state == SlotState.claiming.rawValue && spins < 100_000 {
                spins += 1
                if spins % 100 == 0 { sched_yield() }
                state = csystem_load(slot)
            }
            if state == SlotState.ready.rawValue && labels(of: slot) == wanted { return slot }
        }
        return nil
    }

    private func readySlots(_ region: Region) -> [(UnsafeMutablePointer<CLongLong>, String, String)] {
        (0..<region.count).compactMap { index in
            let slot = slotPointer(region, index)
            guard csystem_load(slot) == SlotState.ready.rawValue else { return nil }
            let bytes = labels(of: slot)
            func text(_ part: ArraySlice<UInt8>) -> String { String(decoding: part.prefix { $0 != 0 }, as: UTF8.self) }
            return (slot, text(bytes[0..<32]), text(bytes[32..<64]))
        }
    }
}
