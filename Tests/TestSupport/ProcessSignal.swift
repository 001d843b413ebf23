#if canImport(Glibc)
import Glibc
#endif

/// One process (or thread) telling another that something happened: a
/// forked child holds a slot, the parent has seen what it wanted. A pipe,
/// so the other waits for exactly that, bounded, instead of a fixed sleep.
/// Made before the fork: both sides hold its ends.
public final class ProcessSignal: @unchecked Sendable {
    private var ends: [Int32] = [0, 0]

    public init() { precondition(pipe(&ends) == 0, "pipe") }
    deinit { close(ends[0]); close(ends[1]) }

    public func send() {
        var byte: UInt8 = 1
        _ = write(ends[1], &byte, 1)
    }

    /// Whether it was sent (one `send` each) within `millis`.
    @discardableResult
    public func wait(millis: Int32 = 30_000) -> Bool {
        var readable = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        guard poll(&readable, 1, millis) == 1 else { return false }
        var byte: UInt8 = 0
        return read(ends[0], &byte, 1) == 1
    }
}
