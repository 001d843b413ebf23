/// At most `limit` of the processes sharing it run a piece of work at once:
/// slots of robust process-shared mutexes in shared memory (the host-wide
/// state file, `SharedState`, or memory a supervisor made before forking),
/// so that a process killed mid-work frees its slot. `HashingGate` and
/// `DecodeGate` say what each bounds.
public class SlotGate: @unchecked Sendable {
    static let maxSlots = 64
    static let bytes = maxSlots * SharedMutex.stride

    private let slots: [SharedMutex]

    /// Slots in memory shared with the processes this one forks.
    public convenience init(purpose: String) {
        self.init(memory: sharedMemory(bytes: Self.bytes, for: purpose), initialize: true)
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
        slots.withOneHeld(limit: limit, body)
    }

    /// Runs `body` holding a free one of the first `limit` slots; nil when
    /// all are taken (for work that had rather be refused than wait).
    func withFreeSlot<R>(limit: Int, _ body: () -> R) -> R? {
        slots.withFreeOneHeld(limit: limit, body)
    }
}
