#if canImport(Glibc)
import Glibc
#endif

/// The progress of a long operator command (`repair`, `migrate`,
/// `migrate-passwords` on a million rows), on stdout about once a second,
/// and its stop: SIGINT (Ctrl-C) or SIGTERM asks it to end between two
/// steps, with nothing half-done, so that the same command run again goes
/// on where it stopped.
final class TaskProgress {
    static let stopSignals = [SIGINT, SIGTERM]
    /// Exit status of a command stopped this way (a shell's for SIGINT).
    static let stoppedStatus: Int32 = 130

    private let task: String
    private let intervalMillis: Int64
    private let started = monotonicMillis()
    private var lastLine: Int64

    /// Holds the stop signals back for the rest of the process's life: they
    /// wait until the task looks (`stopRequested`), and never break a
    /// database call in the middle.
    init(_ task: String, intervalMillis: Int64 = 1000) {
        self.task = task
        self.intervalMillis = intervalMillis
        lastLine = started
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in Self.stopSignals { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    /// Whether a stop signal came (and waits, held back).
    var stopRequested: Bool {
        var pending = sigset_t()
        sigpending(&pending)
        return Self.stopSignals.contains { sigismember(&pending, $0) == 1 }
    }

    /// A free-form line if the last one is a second old.
    func update(_ text: String) {
        let now = monotonicMillis()
        guard now - lastLine >= intervalMillis else { return }
        lastLine = now
        Self.say("\(task): \(text)")
    }

    /// A line for `phase` if the last one is a second old.
    func update(_ phase: String, done: Int, of total: Int? = nil) {
        let now = monotonicMillis()
        guard now - lastLine >= intervalMillis else { return }
        lastLine = now
        Self.say(line(phase, done: done, of: total, now: now))
    }

    /// The phase's last line, whatever the time.
    func finish(_ phase: String, done: Int, of total: Int? = nil) {
        lastLine = monotonicMillis()
        Self.say(line(phase, done: done, of: total, now: lastLine))
    }

    /// A line on stdout at once (print would hold it in a buffer when
    /// stdout is a pipe or a file: an operator's `tee`, a test).
    static func say(_ text: String) {
        _ = Array((text + "\n").utf8).withUnsafeBytes { writeAll(1, $0) }
    }

    /// What to say when a stop was asked for.
    func stoppedMessage(_ what: String) -> String {
        "\(task): stopped (\(what)); nothing is half-done: run the same command again to go on"
    }

    private func line(_ phase: String, done: Int, of total: Int?, now: Int64) -> String {
        var text = "\(task): \(phase): \(done)"
        if let total, total > 0 {
            text += " of \(total) (\(done * 100 / total)%)"
            let elapsed = now - started
            if done > 0 && done < total && elapsed > 0 {
                text += ", about \(Int64(total - done) * elapsed / Int64(done) / 1000 + 1) s left"
            }
        }
        return text
    }
}
