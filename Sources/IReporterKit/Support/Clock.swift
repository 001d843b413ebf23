#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A moment on one clock, in milliseconds. Instants of different clocks do
/// not compare (a host's monotonic clock starts at its boot).
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var millis: Int64

    public init(millis: Int64) { self.millis = millis }

    public func advanced(byMillis millis: Int64) -> Instant { Instant(millis: self.millis + millis) }
    public func advanced(bySeconds seconds: Int64) -> Instant { advanced(byMillis: seconds * 1000) }
    /// Milliseconds from `earlier` to this instant.
    public func millis(since earlier: Instant) -> Int64 { millis - earlier.millis }

    public static func < (a: Instant, b: Instant) -> Bool { a.millis < b.millis }
    public var description: String { "\(millis) ms" }
}

/// Where code that depends on time reads it: the system's clock in the
/// server, a `ManualClock` that a test steps, so that no test sleeps or
/// races the wall clock. (The login throttle reads it through its counters:
/// `SharedCounters.clock`.) For intervals: timeouts, ages, deadlines.
public protocol TimeSource: Sendable {
    var now: Instant { get }
}

/// The time of day, as Unix seconds: for what is stored for people and
/// other programs (a photo's upload time, a session's login) and what is
/// compared with a file's times. It may jump (NTP, an operator's `date`):
/// an interval that decides something in this process is a `TimeSource`'s.
public protocol WallClock: Sendable {
    var unixMillis: Int64 { get }
}

extension WallClock {
    public var unixSeconds: Int64 { unixMillis / 1000 }
}

/// CLOCK_REALTIME, read exactly. Not `time(nil)`: glibc answers it from the
/// last clock tick, and Linux (6.13 on) may stamp a file with a finer time,
/// so a file written just before a second began was "in the future" to it
/// (292 of 36,356 writes here), too young for any grace time, even 0.
public struct RealtimeClock: WallClock {
    public init() {}
    public var unixMillis: Int64 { realtimeMillis() }
}

/// CLOCK_MONOTONIC: never set, never jumps (NTP, an operator's `date`), the
/// same for every process of one host, and starts anew at each boot (what
/// is kept on it must not outlive the boot: the shared state file does not).
public struct MonotonicClock: TimeSource {
    public init() {}
    public var now: Instant { Instant(millis: monotonicMillis()) }
}

/// A clock that moves only when told: for tests. As a `WallClock` it
/// reads its instant as Unix milliseconds.
public final class ManualClock: TimeSource, WallClock {
    private let current: Mutex<Instant>

    /// Starts far from 0, as a monotonic clock does some time after boot.
    public init(_ start: Instant = Instant(millis: 1_000_000_000)) { current = Mutex(start) }

    /// Starts at the time of day: for what compares it with the times the
    /// kernel gives files (sessions' files).
    public static func startingAtTimeOfDay() -> ManualClock {
        ManualClock(Instant(millis: RealtimeClock().unixSeconds * 1000))
    }

    public var unixMillis: Int64 { now.millis }

    public var now: Instant {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    public func advance(byMillis millis: Int64) { current.withLock { $0 = $0.advanced(byMillis: millis) } }
    public func advance(bySeconds seconds: Int64) { advance(byMillis: seconds * 1000) }
}

/// Milliseconds on the monotonic clock (for durations and the watchdog).
func monotonicMillis() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// Microseconds on the monotonic clock (for phase timings).
func monotonicMicros() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
}
