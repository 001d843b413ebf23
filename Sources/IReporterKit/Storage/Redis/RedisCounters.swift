#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The shared counters in Redis, for several app hosts: each key's
/// `CounterEntry` (the same rules as the shared-memory table) is the string
/// `count since lastEvent blockedUntil` at `ireporter:counter:<key>`,
/// changed in a WATCH/MULTI/EXEC transaction (retried when another process
/// changed it meanwhile) and expiring once it would be forgotten. The
/// stream generation is one integer, `ireporter:stream-generation` (INCR).
///
/// Redis bounds nothing here, unlike the fixed table: its `maxmemory`
/// should be ample (docs/SCALING.md). A Redis that cannot be reached
/// throws, and the request is answered "temporarily unavailable".
public final class RedisCounters: SharedCounters {
    static let keyPrefix = "ireporter:counter:"
    static let generationKey = "ireporter:stream-generation"
    /// Transactions retried when other processes keep changing the key.
    static let maxAttempts = 100

    private let connection: Mutex<RedisConnection>

    /// On a connection of its own (guarded: the protocol is Sendable).
    public init(settings: RedisSettings) { connection = Mutex(RedisConnection(settings: settings)) }

    public func blockedFor(_ key: String, now: Int64) throws(RedisError) -> Int64? {
        try withConnection { redis throws(RedisError) in try Self.entry(key, now: now, redis).wait(now: now) }
    }

    @discardableResult
    public func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, now: Int64) throws(RedisError) -> Int64 {
        try update(key, now: now) { $0.recordFailure(threshold: threshold, maxBlockSeconds: maxBlockSeconds, now: now) }
    }

    public func forgive(_ key: String, now: Int64) throws(RedisError) {
        try update(key, now: now) { $0.forgive() }
    }

    @discardableResult
    public func reset(_ key: String) throws(RedisError) -> Int64 {
        try withConnection { redis throws(RedisError) in
            guard let text = try redis.command("GETDEL", Self.keyPrefix + key).bytes() else { return 0 }
            return CounterEntry(stored: text)?.count ?? 0
        }
    }

    public func allow(_ key: String, limit: Int64, windowSeconds: Int64, now: Int64) throws(RedisError) -> Bool {
        try update(key, now: now) { $0.allow(limit: limit, windowSeconds: windowSeconds, now: now) }
    }

    public var streamGeneration: Int64 {
        get throws(RedisError) {
            try withConnection { redis throws(RedisError) in
                try redis.command("GET", Self.generationKey).bytes().flatMap { Int64(String(decoding: $0, as: UTF8.self)) } ?? 0
            }
        }
    }

    public func bumpStreamGeneration() throws(RedisError) {
        try withConnection { redis throws(RedisError) in _ = try redis.command("INCR", Self.generationKey) }
    }

    private func withConnection<T: Sendable>(_ body: (RedisConnection) throws(RedisError) -> T) throws(RedisError) -> T {
        try connection.withLock { redis throws(RedisError) in try body(redis) }
    }

    /// The key's entry, a fresh one if it has none or it was forgotten.
    private static func entry(_ key: String, now: Int64, _ redis: RedisConnection) throws(RedisError) -> CounterEntry {
        guard let text = try redis.command("GET", keyPrefix + key).bytes(), let entry = CounterEntry(stored: text),
              !entry.isForgotten(now: now) else { return CounterEntry(now: now) }
        return entry
    }

    /// Applies `change` to the key's entry atomically and stores it.
    private func update<T: Sendable>(_ key: String, now: Int64, _ change: (inout CounterEntry) -> T) throws(RedisError) -> T {
        try withConnection { redis throws(RedisError) in
            for _ in 0..<Self.maxAttempts {
                let result: T? = try redis.reconnectingOnce { () throws(RedisError) -> T? in
                    do throws(RedisError) {
                        try redis.command("WATCH", Self.keyPrefix + key)
                        var entry = try Self.entry(key, now: now, redis)
                        let result = change(&entry)
                        // Kept while it counts: until it is forgotten (an hour idle) and blocks nothing.
                        let lifetime = max(1, entry.releasedAt - now)
                        try redis.command("MULTI")
                        try redis.command("SET", Self.keyPrefix + key, entry.stored, "EX", String(lifetime))
                        return try redis.command("EXEC") == .null ? nil : result
                    } catch {
                        redis.disconnect()  // never leave a WATCH or a MULTI behind on the connection
                        throw error
                    }
                }
                if let result { return result }
                usleep(UInt32.random(in: 0...1000))  // let the others through
            }
            throw RedisError(code: .unexpectedReply, message: "\(key): changed by others \(Self.maxAttempts) times running")
        }
    }
}

extension CounterEntry {
    /// As RedisCounters stores it.
    var stored: String { "\(count) \(since) \(lastEvent) \(blockedUntil)" }

    init?(stored: [UInt8]) {
        let fields = String(decoding: stored, as: UTF8.self).split(separator: " ").compactMap { Int64($0) }
        guard fields.count == 4 else { return nil }
        self.init(now: fields[1])
        (count, lastEvent, blockedUntil) = (fields[0], fields[2], fields[3])
    }
}
