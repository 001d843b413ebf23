#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Shared counters for one process, in a dictionary: for the App's unit
/// tests, with the same counting and blocking rules (`CounterEntry`) as the
/// shared-memory table; being unbounded, it never has to refuse a key. A
/// test may set the time it counts at (`frozenTime`).
public final class InMemoryCounters: SharedCounters {
    private struct State {
        var entries: [String: CounterEntry] = [:]
        var generation: Int64 = 0
        var frozenTime: Int64?

        var now: Int64 { frozenTime ?? Int64(time(nil)) }

        /// The key's entry, a fresh one if it has none or it was forgotten.
        func entry(_ key: String, now: Int64) -> CounterEntry {
            guard let entry = entries[key], !entry.isForgotten(now: now) else { return CounterEntry(now: now) }
            return entry
        }
    }

    private let state = Mutex(State())

    public init() {}

    /// When set, the time the methods without `now:` count at (seconds can
    /// then be stepped through, never crossed by chance).
    public var frozenTime: Int64? {
        get { state.withLock { $0.frozenTime } }
        set { state.withLock { $0.frozenTime = newValue } }
    }

    public var currentTime: Int64 { state.withLock { $0.now } }

    public func blockedFor(_ key: String, now: Int64) -> Int64? {
        state.withLock { $0.entry(key, now: now).wait(now: now) }
    }

    @discardableResult
    public func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, now: Int64) -> Int64 {
        state.withLock { state in
            var entry = state.entry(key, now: now)
            defer { state.entries[key] = entry }
            return entry.recordFailure(threshold: threshold, maxBlockSeconds: maxBlockSeconds, now: now)
        }
    }

    public func forgive(_ key: String, now: Int64) {
        state.withLock { state in state.entries[key]?.forgive() }
    }

    @discardableResult
    public func reset(_ key: String) -> Int64 {
        state.withLock { state in
            defer { state.entries[key] = nil }
            return state.entry(key, now: state.now).count
        }
    }

    public func allow(_ key: String, limit: Int64, windowSeconds: Int64, now: Int64) -> Bool {
        state.withLock { state in
            var entry = state.entry(key, now: now)
            defer { state.entries[key] = entry }
            return entry.allow(limit: limit, windowSeconds: windowSeconds, now: now)
        }
    }

    public var streamGeneration: Int64 { state.withLock { $0.generation } }

    public func bumpStreamGeneration() { state.withLock { $0.generation += 1 } }
}
