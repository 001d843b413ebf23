#if canImport(Glibc)
import Glibc
#endif

/// Timing for the micro-benchmarks (bench/micro/*.sh run them in release;
/// they are off in the normal test run).
enum MicroBenchmark {
    struct Runs {
        var wall: [Double] = [], cpu: [Double] = []
    }

    /// Wall-clock and this thread's CPU milliseconds of each of n runs (after
    /// a warm-up), `prepare` run untimed before each. CPU time is the
    /// steadier figure on a shared, busy machine.
    static func measure(_ n: Int, _ body: () throws -> Void) rethrows -> Runs {
        try measure(n, prepare: {}, body)
    }

    static func measure(_ n: Int, prepare: () throws -> Void, _ body: () throws -> Void) rethrows -> Runs {
        for _ in 0..<min(3, n) { try prepare(); try body() }  // warm-up: page cache, allocator
        var runs = Runs()
        for _ in 0..<n {
            try prepare()
            let (w0, c0) = (now(CLOCK_MONOTONIC), now(CLOCK_THREAD_CPUTIME_ID))
            try body()
            runs.wall.append(now(CLOCK_MONOTONIC) - w0)
            runs.cpu.append(now(CLOCK_THREAD_CPUTIME_ID) - c0)
        }
        return runs
    }

    static func now(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) * 1e3 + Double(ts.tv_nsec) / 1e6
    }

    static func median(_ v: [Double]) -> Double { let s = v.sorted(); return s[s.count / 2] }

    /// "median / mean / min (cpu median / min)", milliseconds.
    static func format(_ r: Runs) -> String {
        String(format: "%.3f / %.3f / %.3f (cpu %.3f / %.3f)", median(r.wall), r.wall.reduce(0, +) / Double(r.wall.count),
               r.wall.min() ?? 0, median(r.cpu), r.cpu.min() ?? 0)
    }
}
