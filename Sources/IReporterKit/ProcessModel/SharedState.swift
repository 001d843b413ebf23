/// What every process serving the installation shares: the host-local
/// implementation of `SharedCounters` and the Argon2 slots, in the file
/// `shared_state_file` names (`SharedMemoryFile`), so that mod_fcgid's
/// processes, CGI processes and several supervisors see one state, as the
/// workers of one supervisor do.
struct SharedState: Sendable {
    /// Login and upload counters, and the stream generation (each worker's
    /// cached stream is stale once an upload bumps it).
    let counters: SharedMemoryCounters
    /// Bounds the Argon2 hashes computed at once (memory).
    let hashingGate: HashingGate
    /// Bounds the JPEG decodes run at once (memory).
    let decodeGate: DecodeGate
    /// The file it lives in; nil when it is this process tree's own.
    let file: SharedMemoryFile?

    static let counterCapacity = 65536
    /// Bump when the meaning of the layout changes without its size.
    private static let layoutVersion: UInt64 = 3
    private static let countersBytes = (SharedMemoryCounters.bytes(capacity: counterCapacity) + 63) / 64 * 64

    /// Identifies the layout below: a file of another layout is set up anew.
    private static var layout: UInt64 {
        layoutVersion << 56 ^ UInt64(countersBytes) << 20 ^ UInt64(2 * SlotGate.bytes)
    }

    /// The installation's state in the file at `path`, made or checked
    /// (see `SharedMemoryFile`).
    static func open(file path: String) throws(SharedMemoryFile.OpenError) -> SharedState {
        let file = try SharedMemoryFile.open(path: path, payloadBytes: countersBytes + 2 * SlotGate.bytes,
                                             layout: layout) { memory in
            _ = parts(at: memory, initialize: true)
        }
        let (counters, hashing, decoding) = parts(at: file.payload, initialize: false)
        return SharedState(counters: counters, hashingGate: hashing, decodeGate: decoding, file: file)
    }

    /// State for this process and the ones it forks only.
    static func privateToThisProcess() -> SharedState {
        SharedState(counters: SharedMemoryCounters(capacity: counterCapacity), hashingGate: HashingGate(),
                    decodeGate: DecodeGate(), file: nil)
    }

    private static func parts(at memory: UnsafeMutableRawPointer,
                              initialize: Bool) -> (SharedMemoryCounters, HashingGate, DecodeGate) {
        (SharedMemoryCounters(memory: memory, capacity: counterCapacity, initialize: initialize),
         HashingGate(memory: memory + countersBytes, initialize: initialize),
         DecodeGate(memory: memory + countersBytes + SlotGate.bytes, initialize: initialize))
    }
}
