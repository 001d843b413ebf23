/// Bounds how many workers decode a JPEG at the same time. A progressive
/// photo's decode holds its whole coefficient buffer (up to
/// `max_decode_memory_mib`, 128 MiB by default); more decodes at once than
/// there are CPUs only add memory, not speed. So four hostile uploads at once
/// take 2 x 128 MiB on two CPUs, not 4 x, whatever `workers` is.
public final class DecodeGate: SlotGate, @unchecked Sendable {
    public convenience init() { self.init(purpose: "image decoding slots") }
}

extension Optional where Wrapped == DecodeGate {
    /// Runs `decode` holding one of the gate's `limit` slots (at once when
    /// there is no gate): at most `limit` decodes' buffers at once.
    func decoding<R>(limit: Int, _ decode: () throws -> R) throws -> R {
        guard let gate = self else { return try decode() }
        return try gate.withSlot(limit: limit) { Result(catching: decode) }.get()
    }

    /// Runs `decode` if one of the gate's `limit` slots is free now (or
    /// there is no gate); nil when every slot is taken.
    func decodingIfFree<R>(limit: Int, _ decode: () throws -> R) throws -> R? {
        guard let gate = self else { return try decode() }
        return try gate.withFreeSlot(limit: limit) { Result(catching: decode) }?.get()
    }
}
