#if canImport(Glibc)
import Glibc
#endif

/// A forked child of this test process, playing another worker. A child
/// that needs a lock another thread held at fork time (the Swift runtime's,
/// say) waits forever, so scripts/test.sh runs the tests one at a time
/// (`swift test --no-parallel`: no other test's thread is busy when one
/// forks). A plain parallel `swift test` can still hit it: the parent waits
/// with a deadline and kills a child that outlives it, a failed test rather
/// than a hung run.
public struct ChildProcess {
    public let pid: pid_t

    /// Forks; the child runs `body` and exits with what it returns.
    public init(_ body: () -> Int32) {
        let pid = fork()
        if pid == 0 { _exit(body()) }
        self.pid = pid
    }

    /// Its exit code; nil when a signal ended it or it outlived `seconds`
    /// (then it is killed).
    @discardableResult
    public func wait(seconds: Int = 30) -> Int32? {
        var status: Int32 = 0
        for _ in 0..<(seconds * 100) {
            if waitpid(pid, &status, WNOHANG) == pid { return status & 0x7F == 0 ? (status >> 8) & 0xFF : nil }
            usleep(10_000)
        }
        terminate()
        return nil
    }

    /// Whether it has ended, leaving it to `wait` to reap.
    public var hasExited: Bool {
        var info = siginfo_t()
        return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info._sifields._sigchld.si_pid == pid
    }

    /// Kills it and reaps it.
    public func terminate() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}
