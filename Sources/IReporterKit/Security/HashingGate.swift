#if canImport(Glibc)
import Glibc
#endif

/// Bounds how many workers compute an Argon2 hash at the same time. Each
/// hash holds `password_hash_memory_kib` (19 MiB by default) while it runs;
/// more hashes at once than there are CPUs only add memory, not speed. So
/// with 32 workers and 2 CPUs a flood of logins takes 2 x 19 MiB, not 32 x.
///
/// Slots are robust process-shared mutexes in memory made by the supervisor
/// before it forks (kept across reloads, so the limit may change then): a
/// worker killed mid-hash frees its slot.
public final class HashingGate: @unchecked Sendable {
    static let maxSlots = 64

    private let slots: [SharedMutex]

    public init() {
        let memory = sharedMemory(bytes: Self.maxSlots * SharedMutex.stride, for: "password hashing slots")
        slots = (0..<Self.maxSlots).map { SharedMutex(initializingAt: memory + $0 * SharedMutex.stride) }
    }

    /// Runs `body` holding one of the first `limit` slots: a free one if
    /// there is any, else waits for this process's own.
    func withSlot<R>(limit: Int, _ body: () -> R) -> R {
        slots.withOneHeld(limit: limit, body)
    }
}
