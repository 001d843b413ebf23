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
    /// One sweep of the upload folder per interval, whichever process runs it.
    let sweepClock: SweepClock
    /// What the status page's `?openmetrics` counts: requests, errors, refusals.
    let metrics: MetricsTable
    /// The file it lives in; nil when it is this process tree's own.
    let file: SharedMemoryFile?
    /// Answers the workers keep for each other (`feed`'s): not in the file,
    /// in memory shared with the workers this process forks only (answers
    /// are a viewer's photos: they stay off the disk).
    let answers = SharedAnswerTable()

    static let counterCapacity = 65536
    /// Bump when the meaning of the layout changes without its size (5: the
    /// counters count in monotonic milliseconds, no longer Unix seconds; 6:
    /// the metrics table).
    private static let layoutVersion: UInt64 = 6
    private static let countersBytes = (SharedMemoryCounters.bytes(capacity: counterCapacity) + 63) / 64 * 64

    /// Identifies the layout below: a file of another layout is set up anew.
    private static var layout: UInt64 {
        layoutVersion << 56 ^ UInt64(countersBytes) << 20 ^ UInt64(2 * SlotGate.bytes) << 4 ^ UInt64(SweepClock.bytes)
            ^ UInt64(MetricsTable.bytes) << 32
    }
    private static let payloadBytes = countersBytes + 2 * SlotGate.bytes + SweepClock.bytes + MetricsTable.bytes

    /// The installation's state in the file at `path`, made or checked
    /// (see `SharedMemoryFile`).
    static func open(file path: String) throws(SharedMemoryFile.OpenError) -> SharedState {
        let file = try SharedMemoryFile.open(path: path, payloadBytes: payloadBytes, layout: layout) { memory in
            _ = SharedState(at: memory, initialize: true, file: nil)
        }
        return SharedState(at: file.payload, initialize: false, file: file)
    }

    /// State for this process and the ones it forks only.
    static func privateToThisProcess() -> SharedState {
        SharedState(at: sharedMemory(bytes: payloadBytes, for: "shared state"), initialize: true, file: nil)
    }

    /// The parts at `memory` (`payloadBytes`): set up there when `initialize`.
    private init(at memory: UnsafeMutableRawPointer, initialize: Bool, file: SharedMemoryFile?) {
        counters = SharedMemoryCounters(memory: memory, capacity: Self.counterCapacity, initialize: initialize)
        hashingGate = HashingGate(memory: memory + Self.countersBytes, initialize: initialize)
        decodeGate = DecodeGate(memory: memory + Self.countersBytes + SlotGate.bytes, initialize: initialize)
        sweepClock = SweepClock(memory: memory + Self.countersBytes + 2 * SlotGate.bytes)
        metrics = MetricsTable(memory: memory + Self.countersBytes + 2 * SlotGate.bytes + SweepClock.bytes,
                               initialize: initialize)
        self.file = file
    }
}
