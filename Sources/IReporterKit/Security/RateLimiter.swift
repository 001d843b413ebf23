#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// Counters by key (login failures per name and address, uploads per
/// user), in memory that every worker process shares: made before the
/// workers are forked, guarded by a robust process-shared mutex (a worker
/// killed while holding it does not wedge the others). A fixed-size table:
/// old entries are recycled, so memory stays bounded whatever keys arrive.
public final class RateLimiter: @unchecked Sendable {
    private struct Entry {
        var key: UInt64
        var count: Int64
        var windowStart: Int64
        var lastEvent: Int64
        var blockedUntil: Int64
    }

    /// Entries idle this long are forgotten.
    static let forgetAfterSeconds: Int64 = 3600
    private static let probes = 16

    private let capacity: Int
    private let mutex: SharedMutex
    private let entries: UnsafeMutablePointer<Entry>
    private let seed: UInt64

    public init(capacity: Int = 8192) {
        self.capacity = capacity
        let bytes = SharedMutex.stride + capacity * MemoryLayout<Entry>.stride
        let memory = sharedMemory(bytes: bytes, for: "rate limiter")
        mutex = SharedMutex(initializingAt: memory)
        entries = (memory + SharedMutex.stride).bindMemory(to: Entry.self, capacity: capacity)
        var random: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &random) { csystem_random_bytes($0.baseAddress!, $0.count) }
        seed = random
    }

    /// Seconds until `key` may try again, if it is blocked.
    public func blockedFor(_ key: String, now: Int64 = Int64(time(nil))) -> Int64? {
        locked {
            guard let index = find(key, now: now, create: false) else { return nil }
            let wait = entries[index].blockedUntil - now
            return wait > 0 ? wait : nil
        }
    }

    /// Counts a failure; from the `threshold`-th on, blocks `key` for 1, 2,
    /// 4, … seconds, never longer than `maxBlockSeconds`.
    public func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, now: Int64 = Int64(time(nil))) {
        locked {
            guard let index = find(key, now: now, create: true) else { return }
            entries[index].count += 1
            entries[index].lastEvent = now
            let excess = entries[index].count - threshold
            if excess >= 0 {
                entries[index].blockedUntil = now + min(Int64(1) << min(excess, 30), maxBlockSeconds)
            }
        }
    }

    public func reset(_ key: String) {
        locked {
            if let index = find(key, now: Int64(time(nil)), create: false) { entries[index].key = 0 }
        }
    }

    /// Counts one event in a fixed window; false once `limit` events
    /// happened in the current `windowSeconds`.
    public func allow(_ key: String, limit: Int64, windowSeconds: Int64, now: Int64 = Int64(time(nil))) -> Bool {
        locked {
            guard let index = find(key, now: now, create: true) else { return true }
            if now - entries[index].windowStart >= windowSeconds {
                entries[index].windowStart = now
                entries[index].count = 0
            }
            entries[index].lastEvent = now
            guard entries[index].count < limit else { return false }
            entries[index].count += 1
            return true
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        mutex.lock()
        defer { mutex.unlock() }
        return body()
    }

    private func hash(_ key: String) -> UInt64 {
        var value: UInt64 = 0xcbf29ce484222325 ^ seed
        for byte in key.utf8 {
            value ^= UInt64(byte)
            value = value &* 0x100000001b3
        }
        return value == 0 ? 1 : value
    }

    private func find(_ key: String, now: Int64, create: Bool) -> Int? {
        let wanted = hash(key)
        let start = Int(wanted % UInt64(capacity))
        var reusable: Int?
        var oldest: Int?
        for probe in 0..<Self.probes {
            let index = (start + probe) % capacity
            let entry = entries[index]
            if entry.key == wanted {
                if now - entry.lastEvent > Self.forgetAfterSeconds && entry.blockedUntil <= now {
                    entries[index] = Entry(key: wanted, count: 0, windowStart: now, lastEvent: now, blockedUntil: 0)
                }
                return index
            }
            let stale = entry.key == 0 || (now - entry.lastEvent > Self.forgetAfterSeconds && entry.blockedUntil <= now)
            if stale && reusable == nil { reusable = index }
            if oldest.map({ entries[$0].lastEvent > entry.lastEvent }) ?? true { oldest = index }
        }
        guard create, let slot = reusable ?? oldest else { return nil }
        entries[slot] = Entry(key: wanted, count: 0, windowStart: now, lastEvent: now, blockedUntil: 0)
        return slot
    }
}

/// Login throttling with exponential back-off, so that guessing is slow but
/// nobody can lock a user out for long:
/// - a name from one address: from the 5th failure, up to 15 minutes;
/// - one address, any names: from the 20th failure, up to 15 minutes;
/// - one name from any address (a distributed attack): from the 100th
///   failure, at most a minute, so the real user always gets in soon.
/// A successful login clears its name-and-address counter.
public struct LoginThrottle: Sendable {
    let limiter: RateLimiter

    public init(limiter: RateLimiter) { self.limiter = limiter }

    private func keys(username: [UInt8], address: String) -> [(String, threshold: Int64, maxBlock: Int64)] {
        let name = String(decoding: PasswordHasher.normalized(username), as: UTF8.self)
        return [("login:\(name)\u{0}\(address)", 5, 900), ("login-address:\(address)", 20, 900),
                ("login-name:\(name)", 100, 60)]
    }

    /// Seconds to wait, if this attempt is not allowed now.
    public func wait(username: [UInt8], address: String) -> Int64? {
        keys(username: username, address: address).compactMap { limiter.blockedFor($0.0) }.max()
    }

    public func failed(username: [UInt8], address: String) {
        for (key, threshold, maxBlock) in keys(username: username, address: address) {
            limiter.recordFailure(key, threshold: threshold, maxBlockSeconds: maxBlock)
        }
    }

    public func succeeded(username: [UInt8], address: String) {
        limiter.reset(keys(username: username, address: address)[0].0)
    }
}
