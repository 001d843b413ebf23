#if canImport(Glibc)
import Glibc
#endif

/// Counters that every process serving the installation must see alike:
/// failures and events per key (login throttling, upload limits) and the
/// stream's change generation (read-your-writes of the stream cache).
public protocol SharedCounters: AnyObject, Sendable {
    /// Seconds until `key` may try again, if it is blocked.
    func blockedFor(_ key: String, now: Int64) -> Int64?
    /// Counts a failure; from the `threshold`-th on, blocks `key` for 1, 2,
    /// 4, … seconds, never longer than `maxBlockSeconds`.
    func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, now: Int64)
    func reset(_ key: String)
    /// Counts one event in a fixed window; false once `limit` events
    /// happened in the current `windowSeconds`.
    func allow(_ key: String, limit: Int64, windowSeconds: Int64, now: Int64) -> Bool
    /// Changes whenever a photo is added through any process.
    var streamGeneration: Int64 { get }
    func bumpStreamGeneration()
}

extension SharedCounters {
    public func blockedFor(_ key: String) -> Int64? { blockedFor(key, now: Int64(time(nil))) }
    public func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64) {
        recordFailure(key, threshold: threshold, maxBlockSeconds: maxBlockSeconds, now: Int64(time(nil)))
    }
    public func allow(_ key: String, limit: Int64, windowSeconds: Int64) -> Bool {
        allow(key, limit: limit, windowSeconds: windowSeconds, now: Int64(time(nil)))
    }
}

/// The back-off both counter stores apply: 1 s at the threshold, doubling
/// with every further failure, capped.
enum Backoff {
    static func blockSeconds(failures: Int64, threshold: Int64, maxBlockSeconds: Int64) -> Int64? {
        let excess = failures - threshold
        guard excess >= 0 else { return nil }
        return min(Int64(1) << min(excess, 30), maxBlockSeconds)
    }
}
