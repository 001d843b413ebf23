/// What the workers share, made by the supervisor before it forks them and
/// kept across reloads.
struct SharedState: Sendable {
    /// Login and upload counters, and the stream generation (each worker's
    /// cached stream is stale once an upload bumps it).
    var counters = SharedMemoryCounters()
    /// Bounds the Argon2 hashes computed at once (memory).
    var hashingGate = HashingGate()
    /// Bounds the JPEG decodes run at once (memory).
    var decodeGate = DecodeGate()
}
