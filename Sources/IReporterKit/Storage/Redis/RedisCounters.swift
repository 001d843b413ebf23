#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The shared counters in Redis, for several app hosts: each key's
/// `CounterEntry` (the same rules as the shared-memory table) is the string
/// `count since lastEvent blockedUntil` at `ireporter:counter-ms:<key>`,
/// changed in a WATCH/MULTI/EXEC transaction (retried when another process
/// changed it meanwhile) and expiring once it would be forgotten. The
/// stream generation is one integer, `ireporter:stream-generation` (INCR),
/// each bump announced to the hosts' stream answer files.
/// The times are milliseconds of the Redis server's clock (`RedisServerClock`):
/// the hosts' own clocks are not each other's. (The prefix changed with the
/// unit: a server counting in seconds must not read milliseconds.)
///
/// Redis bounds nothing here, unlike the fixed table: its `maxmemory`
/// should be ample (docs/SCALING.md). A Redis that cannot be reached
/// throws, and the request is answered "temporarily unavailable".
public final class RedisCounters: SharedCounters {
    static let keyPrefix = "ireporter:counter-ms:"
    static let generationKey = "ireporter:stream-generation"
    /// Transactions retried when other processes keep changing the key.
    static let maxAttempts = 100

    private let connection: Mutex<RedisConnection>
    public let clock: any TimeSource

    /// On a connection of its own (guarded: the protocol is Sendable),
    /// counting at the Redis server's clock unless a test gives another.
    public init(settings: RedisSettings, clock: (any TimeSource)? = nil) {
        connection = Mutex(RedisConnection(settings: settings))
        self.clock = clock ?? RedisServerClock(settings: settings)
    }

    public func blockedMillis(_ key: String, at instant: Instant) throws(RedisError) -> Int64? {
        let now = instant.millis
        return try withConnection { redis throws(RedisError) in try Self.entry(key, now: now, redis).wait(now: now) }
    }

    @discardableResult
    public func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, at instant: Instant) throws(RedisError) -> Int64 {
        let now = instant.millis
        return try update(key, now: now) { $0.recordFailure(threshold: threshold, maxBlockSeconds: maxBlockSeconds, now: now) }
    }

    public func forgive(_ key: String, at instant: Instant) throws(RedisError) {
        try update(key, now: instant.millis) { $0.forgive() }
    }

    @discardableResult
    public func reset(_ key: String) throws(RedisError) -> Int64 {
        try withConnection { redis throws(RedisError) in
            guard let text = try redis.command("GETDEL", Self.keyPrefix + key).bytes() else { return 0 }
            return CounterEntry(stored: text)?.count ?? 0
        }
    }

    public func use(_ key: String, limit: Int64, windowSeconds: Int64, at instant: Instant) throws(RedisError) -> WindowUse {
        let now = instant.millis
        return try update(key, now: now) { $0.use(limit: limit, windowSeconds: windowSeconds, now: now) }
    }

    public var streamGeneration: Int64 {
        get throws(RedisError) {
            try withConnection { redis throws(RedisError) in
                try redis.command("GET", Self.generationKey).bytes().flatMap { Int64(String(decoding: $0, as: UTF8.self)) } ?? 0
            }
        }
    }

    /// Returns once every host's stream answer file is gone (`RedisStreamChanges`).
    public func bumpStreamGeneration() throws(RedisError) {
        try withConnection { redis throws(RedisError) in
            _ = try redis.command("INCR", Self.generationKey)
            try RedisStreamChanges.announce(over: redis)
        }
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
                        try redis.command("SET", Self.keyPrefix + key, entry.stored, "PX", String(lifetime))
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

/// The Redis server's clock (`TIME`, to the millisecond), which every app
/// host shares, read again at most once a minute and advanced in between by
/// this host's monotonic clock: one time for all the hosts counting in
/// Redis (their own clocks may disagree by seconds), that does not jump
/// when this host's clock is set, at no round trip per reading. It never
/// goes back, but once. When Redis cannot be reached it goes on from its
/// last reading and asks again a minute later: the counters' next command
/// fails anyway, and is not made to wait twice. Before any reading it gives
/// this host's clock and asks again a second later; the first reading then
/// replaces it, even behind it (kept as a floor, a host clock ahead of
/// Redis's stopped this worker's time, and the blocks and windows with it).
public final class RedisServerClock: TimeSource {
    static let rereadMillis: Int64 = 60_000
    static let retryMillis: Int64 = 1000

    private struct Reading {
        var server: Int64
        var local: Int64
        /// When Redis was last asked (answered or not): once a minute at most.
        var asked: Int64
        var lastAnswer: Int64 = 0
        /// False: this host's clock, before Redis gave any reading.
        var isServers = true
    }

    private let readServer: @Sendable () throws -> Int64
    private let reading = Mutex<Reading?>(nil)
    private let local: any TimeSource

    public convenience init(settings: RedisSettings, local: any TimeSource = MonotonicClock()) {
        let time = RedisTime(settings: settings)
        self.init(local: local) { try time.millis() }
    }

    /// `readServer`: Redis's `TIME` in milliseconds (a test gives its own).
    init(local: any TimeSource, readServer: @escaping @Sendable () throws -> Int64) {
        self.local = local
        self.readServer = readServer
    }

    public var now: Instant {
        let localNow = local.now.millis
        let due = reading.withLock { $0.map { localNow - $0.asked >= ($0.isServers ? Self.rereadMillis : Self.retryMillis) } ?? true }
        let fresh = due ? try? readServer() : nil
        return reading.withLock { reading in
            if let fresh {
                let floor = reading.map { $0.isServers ? $0.lastAnswer : 0 } ?? 0
                reading = Reading(server: fresh, local: localNow, asked: localNow, lastAnswer: floor)
            } else if due {
                reading = reading ?? Reading(server: Self.wallClockMillis(), local: localNow, asked: localNow, isServers: false)
                reading!.asked = localNow
            }
            let answer = max(reading!.lastAnswer, reading!.server + localNow - reading!.local)
            reading!.lastAnswer = answer
            return Instant(millis: answer)
        }
    }

    private static func wallClockMillis() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

/// Redis's `TIME` in milliseconds, on a connection of its own.
private final class RedisTime: Sendable {
    private let connection: Mutex<RedisConnection>

    init(settings: RedisSettings) { connection = Mutex(RedisConnection(settings: settings)) }

    func millis() throws(RedisError) -> Int64 {
        try connection.withLock { redis throws(RedisError) in
            let reply = try redis.command("TIME")
            guard case .array(let parts) = reply, parts.count == 2,
                  let seconds = try parts[0].bytes().flatMap({ Int64(String(decoding: $0, as: UTF8.self)) }),
                  let micros = try parts[1].bytes().flatMap({ Int64(String(decoding: $0, as: UTF8.self)) }) else {
                throw RedisError(code: .unexpectedReply, message: "TIME: \(reply)")
            }
            return seconds * 1000 + micros / 1000
        }
    }
}
