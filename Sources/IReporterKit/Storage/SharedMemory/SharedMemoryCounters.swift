#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The shared counters in shared memory: the host-wide state file that
/// every process of the installation maps (`SharedState`), or memory made
/// before a supervisor forks its workers. Counters by key
/// (login failures per name and address, uploads per user) are guarded by a
/// robust process-shared mutex (a worker killed while holding it does not
/// wedge the others); a fixed-size table whose old entries are recycled, so
/// memory stays bounded whatever keys arrive. The stream generation is one
/// atomic word beside them.
public final class SharedMemoryCounters: SharedCounters, @unchecked Sendable {
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
    private let generation: UnsafeMutablePointer<CLongLong>
    private let seed: UInt64

    /// A table in memory shared with the processes this one forks.
    public convenience init(capacity: Int = 8192) {
        self.init(memory: sharedMemory(bytes: Self.bytes(capacity: capacity), for: "shared counters"),
                  capacity: capacity, initialize: true)
    }

    /// Bytes a table of `capacity` entries takes.
    static func bytes(capacity: Int) -> Int { 64 + SharedMutex.stride + capacity * MemoryLayout<Entry>.stride }

    /// The table at `memory` (`bytes(capacity:)`, zeroed when new): set up
    /// there when `initialize`, else used as the process that did left it.
    init(memory: UnsafeMutableRawPointer, capacity: Int, initialize: Bool) {
        self.capacity = capacity
        // The generation gets a cache line of its own: every stream reads it.
        // The hash seed sits beside it: every process must place a key alike.
        generation = memory.bindMemory(to: CLongLong.self, capacity: 2)
        let seedWord = memory.advanced(by: 8).assumingMemoryBound(to: UInt64.self)
        entries = (memory + 64 + SharedMutex.stride).bindMemory(to: Entry.self, capacity: capacity)
        if initialize {
            mutex = SharedMutex(initializingAt: memory + 64)
            var random: UInt64 = 0
            _ = withUnsafeMutableBytes(of: &random) { csystem_random_bytes($0.baseAddress!, $0.count) }
            seedWord.pointee = random
        } else {
            mutex = SharedMutex(at: memory + 64)
        }
        seed = seedWord.pointee
    }

    public var streamGeneration: Int64 { Int64(csystem_load(generation)) }
    public func bumpStreamGeneration() { _ = csystem_add(generation, 1) }

    public func blockedFor(_ key: String, now: Int64) -> Int64? {
        locked {
            guard let index = find(key, now: now, create: false) else { return nil }
            let wait = entries[index].blockedUntil - now
            return wait > 0 ? wait : nil
        }
    }

    public func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, now: Int64) {
        locked {
            guard let index = find(key, now: now, create: true) else { return }
            entries[index].count += 1
            entries[index].lastEvent = now
            if let block = Backoff.blockSeconds(failures: entries[index].count, threshold: threshold,
                                                maxBlockSeconds: maxBlockSeconds) {
                entries[index].blockedUntil = now + block
            }
        }
    }

    public func reset(_ key: String) {
        locked {
            if let index = find(key, now: Int64(time(nil)), create: false) { entries[index].key = 0 }
        }
    }

    public func allow(_ key: String, limit: Int64, windowSeconds: Int64, now: Int64) -> Bool {
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
