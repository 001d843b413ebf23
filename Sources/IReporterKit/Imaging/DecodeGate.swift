#if canImport(Glibc)
import Glibc
#endif

/// Bounds how many workers decode a JPEG at the same time. A progressive
/// photo's decode holds its whole coefficient buffer (up to
/// `max_decode_memory_mib`, 128 MiB by default); more decodes at once than
/// there are CPUs only add memory, not speed. So four hostile uploads at once
/// take 2 x 128 MiB on two CPUs, not 4 x, whatever `workers` is.
///
/// Slots are robust process-shared mutexes in memory made by the supervisor
/// before it forks (as `HashingGate`'s): a worker killed mid-decode frees
/// its slot.
public final class DecodeGate: @unchecked Sendable {
    static let maxSlots = 64

    private let slots: [SharedMutex]

    public init() {
        let memory = sharedMemory(bytes: Self.maxSlots * SharedMutex.stride, for: "image decoding slots")
        slots = (0..<Self.maxSlots).map { SharedMutex(initializingAt: memory + $0 * SharedMutex.stride) }
    }

    /// Runs `body` while at most `limit` decodes (of all the processes
    /// sharing this gate) run.
    func withSlot<R>(limit: Int, _ body: () -> R) -> R {
        slots.withOneHeld(limit: limit, body)
    }
}
