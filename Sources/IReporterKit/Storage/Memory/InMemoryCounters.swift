import Synchronization

/// Shared counters for one process, in a dictionary: for the App's unit
/// tests, with the same back-off and window rules as the shared-memory table.
public final class InMemoryCounters: SharedCounters {
    private struct Entry {
        var count: Int64 = 0
        var windowStart: Int64
        var blockedUntil: Int64 = 0
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var generation: Int64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public func blockedFor(_ key: String, now: Int64) -> Int64? {
        state.withLock { state in
            guard let entry = state.entries[key], entry.blockedUntil > now else { return nil }
            return entry.blockedUntil - now
        }
    }

    public func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, now: Int64) {
        state.withLock { state in
            var entry = state.entries[key] ?? Entry(windowStart: now)
            entry.count += 1
            if let block = Backoff.blockSeconds(failures: entry.count, threshold: threshold, maxBlockSeconds: maxBlockSeconds) {
                entry.blockedUntil = now + block
            }
            state.entries[key] = entry
        }
    }

    public func reset(_ key: String) {
        state.withLock { _ = $0.entries.removeValue(forKey: key) }
    }

    public func allow(_ key: String, limit: Int64, windowSeconds: Int64, now: Int64) -> Bool {
        state.withLock { state in
            var entry = state.entries[key] ?? Entry(windowStart: now)
            if now - entry.windowStart >= windowSeconds { entry = Entry(windowStart: now) }
            guard entry.count < limit else { return false }
            entry.count += 1
            state.entries[key] = entry
            return true
        }
    }

    public var streamGeneration: Int64 { state.withLock { $0.generation } }

    public func bumpStreamGeneration() { state.withLock { $0.generation += 1 } }
}
