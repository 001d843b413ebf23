#if canImport(Glibc)
import Glibc
#endif

/// Bounds how many workers compute an Argon2 hash at the same time. Each
/// hash holds `password_hash_memory_kib` (19 MiB by default) while it runs;
/// more hashes at once than there are CPUs only add memory, not speed. So
/// with 32 workers and 2 CPUs a flood of logins takes 2 x 19 MiB, not 32 x.
///
/// Slots are robust process-shared mutexes in the host-wide state file
/// (`SharedState`), so the bound holds for every process of the installation
/// (mod_fcgid's, CGI's), and across reloads (the limit may change then): a
/// process killed mid-hash frees its slot.
public final class HashingGate: @unchecked Sendable {
    static let maxSlots = 64
    static let bytes = maxSlots * SharedMutex.stride

    private let slots: [SharedMutex]

    /// Slots in memory shared with the processes this one forks.
    public convenience init() {
        self.init(memory: sharedMemory(bytes: Self.bytes, for: "password hashing slots"), initialize: true)
    }

    /// The slots at `memory` (`bytes`): set up there when `initialize`, else
    /// used as the process that did left them.
    init(memory: UnsafeMutableRawPointer, initialize: Bool) {
        slots = (0..<Self.maxSlots).map { index in
            initialize ? SharedMutex(initializingAt: memory + index * SharedMutex.stride)
                       : SharedMutex(at: memory + index * SharedMutex.stride)
        }
    }

    /// Runs `body` holding one of the first `limit` slots: a free one if
    /// there is any, else waits for this process's own.
    func withSlot<R>(limit: Int, _ body: () -> R) -> R {
        let count = min(max(limit, 1), Self.maxSlots)
        let preferred = Int(getpid()) % count
        let order = (0..<count).lazy.map { (preferred + $0) % count }
        let held: SharedMutex
        if let free = order.first(where: { slots[$0].tryLock() }) {
            held = slots[free]
        } else {
            held = slots[preferred]
            held.lock()
        }
        defer { held.unlock() }
        return body()
    }
}
