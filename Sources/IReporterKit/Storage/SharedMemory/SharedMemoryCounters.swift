#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The shared counters in shared memory: the host-wide state file that
/// every process of the installation maps (`SharedState`), or memory made
/// before a supervisor forks its workers. Counters by key
/// (login failures, registrations, uploads per user) are guarded by a
/// robust process-shared mutex (a worker killed while holding it does not
/// wedge the others). The stream generation is one atomic word beside them.
///
/// The table has a fixed size, so memory stays bounded whatever keys
/// arrive: a key lives in one of `probes` slots from its hash. A new key
/// takes a free or forgotten slot, else the least recently used entry that
/// never blocked. An entry that blocks, or blocked and is not forgotten yet
/// (`CounterEntry.holdsBlock`), is never evicted: when every slot a new key
/// may take holds one, the new key is refused (`blockedMillis` answers when a
/// slot frees) rather than an old block forgotten. A flood of fresh keys
/// therefore evicts only entries that block nothing. Blocks cost an attacker
/// hashes (the `HashingGate` bounds them) or networks (the throttles key
/// addresses by IPv4 address or IPv6 /64), so the default 65,536 entries
/// (2.5 MiB) stay mostly free of them (docs/SECURITY.md).
///
/// Times are milliseconds on the host's monotonic clock (every process of
/// the host reads it alike; the state file does not outlive a boot).
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
        /// Every slot the key may take holds a block: none frees for this many milliseconds.
        case full(retryAfter: Int64)
    }

    static let probes = 16

    private let capacity: Int
    private let mutex: SharedMutex
    private let entries: UnsafeMutablePointer<Entry>
    private let generation: UnsafeMutablePointer<CLongLong>
    private let seed: UInt64
    public let clock: any TimeSource

    /// A table in memory shared with the processes this one forks.
    public convenience init(capacity: Int = 65536, clock: any TimeSource = MonotonicClock()) {
        self.init(memory: sharedMemory(bytes: Self.bytes(capacity: capacity), for: "shared counters"),
                  capacity: capacity, initialize: true, clock: clock)
    }

    /// Bytes a table of `capacity` entries takes.
    static func bytes(capacity: Int) -> Int { 64 + SharedMutex.stride + capacity * MemoryLayout<Entry>.stride }

    /// The table at `memory` (`bytes(capacity:)`, zeroed when new): set up
    /// there when `initialize`, else used as the process that did left it.
    init(memory: UnsafeMutableRawPointer, capacity: Int, initialize: Bool, clock: any TimeSource = MonotonicClock()) {
        self.capacity = capacity
        self.clock = clock
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

    /// The host's nginx answers `stream` from it: a change removes it, after
    /// the bump (what a render checks before putting an answer back).
    var streamAnswer: StreamAnswerFile?

    public var streamGeneration: Int64 { Int64(csystem_load(generation)) }
    public func bumpStreamGeneration() {
        _ = csystem_add(generation, 1)
        streamAnswer?.remove()
    }

    public func blockedMillis(_ key: String, at instant: Instant) -> Int64? {
        let now = instant.millis
        return locked {
            switch place(of: hash(key), now: now) {
            case .found(let index): entries[index].state.wait(now: now)
            case .vacant: nil
            case .full(let retryAfter): retryAfter
            }
        }
    }

    @discardableResult
    public func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, at instant: Instant) -> Int64 {
        let now = instant.millis
        return locked {
            guard let index = claim(key, now: now) else { return 0 }
            return entries[index].state.recordFailure(threshold: threshold, maxBlockSeconds: maxBlockSeconds, now: now)
        }
    }

    public func forgive(_ key: String, at instant: Instant) {
        let now = instant.millis
        locked {
            if case .found(let index) = place(of: hash(key), now: now) { entries[index].state.forgive() }
        }
    }

    @discardableResult
    public func reset(_ key: String) -> Int64 {
        let now = clock.now.millis
        return locked {
            guard case .found(let index) = place(of: hash(key), now: now) else { return 0 }
            entries[index].key = 0
            return entries[index].state.count
        }
    }

    public func use(_ key: String, limit: Int64, windowSeconds: Int64, at instant: Instant) -> WindowUse {
        let now = instant.millis
        return locked {
            guard let index = claim(key, now: now) else { return .uncounted(windowSeconds: windowSeconds, now: now) }
            return entries[index].state.use(limit: limit, windowSeconds: windowSeconds, now: now)
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
