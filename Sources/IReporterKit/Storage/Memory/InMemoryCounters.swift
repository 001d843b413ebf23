import Synchronization

/// Shared counters for one process, in a dictionary: for the App's unit
/// tests, with the same counting and blocking rules (`CounterEntry`) as the
/// shared-memory table; being unbounded, it never has to refuse a key. A
/// test gives it a `ManualClock` and steps it.
public final class InMemoryCounters: SharedCounters {
    private struct State {
        var entries: [String: CounterEntry] = [:]
        var generation: Int64 = 0

        /// The key's entry, a fresh one if it has none or it was forgotten.
        func entry(_ key: String, now: Int64) -> CounterEntry {
            guard let entry = entries[key], !entry.isForgotten(now: now) else { return CounterEntry(now: now) }
            return entry
        }
    }

    private let state = Mutex(State())
    public let clock: any TimeSource

    public init(clock: any TimeSource = MonotonicClock()) { self.clock = clock }

    public func blockedMillis(_ key: String, at now: Instant) -> Int64? {
        state.withLock { $0.entry(key, now: now.millis).wait(now: now.millis) }
    }

    @discardableResult
    public func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, at now: Instant) -> Int64 {
        state.withLock { state in
            var entry = state.entry(key, now: now.millis)
            defer { state.entries[key] = entry }
            return entry.recordFailure(threshold: threshold, maxBlockSeconds: maxBlockSeconds, now: now.millis)
        }
    }

    public func forgive(_ key: String, at now: Instant) {
        state.withLock { state in state.entries[key]?.forgive() }
    }

    @discardableResult
    public func reset(_ key: String) -> Int64 {
        let now = clock.now.millis
        return state.withLock { state in
            defer { state.entries[key] = nil }
            return state.entry(key, now: now).count
        }
    }

    public func use(_ key: String, limit: Int64, windowSeconds: Int64, at now: Instant) -> WindowUse {
        state.withLock { state in
            var entry = state.entry(key, now: now.millis)
            defer { state.entries[key] = entry }
            return entry.use(limit: limit, windowSeconds: windowSeconds, now: now.millis)
        }
    }

    public var streamGeneration: Int64 { state.withLock { $0.generation } }

    public func bumpStreamGeneration() { state.withLock { $0.generation += 1 } }
}
