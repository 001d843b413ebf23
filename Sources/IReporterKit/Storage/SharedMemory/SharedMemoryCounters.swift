#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The shared counters in memory that every worker process of one
/// supervisor shares: made before the workers are forked. Counters by key
/// (login failures, registrations, uploads per user) are guarded by a
/// robust process-shared mutex (a worker killed while holding it does not
/// wedge the others). The stream generation is one atomic word beside them.
///
/// The table has a fixed size, so memory stays bounded whatever keys
/// arrive: a key lives in one of `probes` slots from its hash. A new key
/// takes a free or forgotten slot, else the least recently used entry that
/// never blocked. An entry that blocks, or blocked and is not forgotten yet
/// (`CounterEntry.holdsBlock`), is never evicted: when every slot a new key
/// may take holds one, the new key is refused (`blockedFor` answers when a
/// slot frees) rather than an old block forgotten. A flood of fresh keys
/// therefore evicts only entries that block nothing. Blocks cost an attacker
/// hashes (the `HashingGate` bounds them) or networks (the throttles key
/// addresses by IPv4 address or IPv6 /64), so the default 65,536 entries
/// (2.5 MiB) stay mostly free of them (docs/SECURITY.md).
public final class SharedMemoryCounters: SharedCounters, @unchecked Sendable {
    private struct Entry {
        /// The key's hash; 0: a free slot.
        var key: UInt64
        var state: CounterEntry
    }

    /// Where a key is, or may go.
    private enum Place {
        case found(Int)
        case vacant(Int)
        /// Every slot the key may take holds a block: none frees for this many seconds.
        case full(retryAfter: Int64)
    }

    static let probes = 16

    private let capacity: Int
    private let mutex: SharedMutex
    private let entries: UnsafeMutablePointer<Entry>
    private let generation: UnsafeMutablePointer<CLongLong>
    private let seed: UInt64

    public init(capacity: Int = 65536) {
        self.capacity = capacity
        // The generation gets a cache line of its own: every stream reads it.
        let bytes = 64 + SharedMutex.stride + capacity * MemoryLayout<Entry>.stride
        let memory = sharedMemory(bytes: bytes, for: "shared counters")
        generation = memory.bindMemory(to: CLongLong.self, capacity: 1)
        mutex = SharedMutex(initializingAt: memory + 64)
        entries = (memory + 64 + SharedMutex.stride).bindMemory(to: Entry.self, capacity: capacity)
        var random: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &random) { csystem_random_bytes($0.baseAddress!, $0.count) }
        seed = random
    }

    public var streamGeneration: Int64 { Int64(csystem_load(generation)) }
    public func bumpStreamGeneration() { _ = csystem_add(generation, 1) }

    public func blockedFor(_ key: String, now: Int64) -> Int64? {
        locked {
            switch place(of: hash(key), now: now) {
            case .found(let index): entries[index].state.wait(now: now)
            case .vacant: nil
            case .full(let retryAfter): retryAfter
            }
        }
    }

    @discardableResult
    public func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, now: Int64) -> Int64 {
        locked {
            guard let index = claim(key, now: now) else { return 0 }
            return entries[index].state.recordFailure(threshold: threshold, maxBlockSeconds: maxBlockSeconds, now: now)
        }
    }

    public func forgive(_ key: String, now: Int64) {
        locked {
            if case .found(let index) = place(of: hash(key), now: now) { entries[index].state.forgive() }
        }
    }

    @discardableResult
    public func reset(_ key: String) -> Int64 {
        locked {
            guard case .found(let index) = place(of: hash(key), now: currentTime) else { return 0 }
            entries[index].key = 0
            return entries[index].state.count
        }
    }

    public func allow(_ key: String, limit: Int64, windowSeconds: Int64, now: Int64) -> Bool {
        locked {
            guard let index = claim(key, now: now) else { return false }
            return entries[index].state.allow(limit: limit, windowSeconds: windowSeconds, now: now)
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

    /// The key's entry, made if it has none and a slot can be had.
    private func claim(_ key: String, now: Int64) -> Int? {
        let wanted = hash(key)
        switch place(of: wanted, now: now) {
        case .found(let index):
            return index
        case .vacant(let index):
            entries[index] = Entry(key: wanted, state: CounterEntry(now: now))
            return index
        case .full:
            return nil
        }
    }

    private func place(of wanted: UInt64, now: Int64) -> Place {
        let start = Int(wanted % UInt64(capacity))
        var free: Int?
        var leastRecent: Int?
        var retryAfter = Int64.max
        for probe in 0..<Self.probes {
            let index = (start + probe) % capacity
            let entry = entries[index]
            if entry.key == wanted {
                if entry.state.isForgotten(now: now) { entries[index].state = CounterEntry(now: now) }
                return .found(index)
            }
            if entry.key == 0 || entry.state.isForgotten(now: now) {
                free = free ?? index
            } else if entry.state.holdsBlock(now: now) {
                retryAfter = min(retryAfter, entry.state.releasedAt - now)
            } else if leastRecent.map({ entries[$0].state.lastEvent > entry.state.lastEvent }) ?? true {
                leastRecent = index
            }
        }
        if let index = free ?? leastRecent { return .vacant(index) }
        return .full(retryAfter: max(1, retryAfter))
    }
}
