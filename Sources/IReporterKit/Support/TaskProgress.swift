#if canImport(Glibc)
import Glibc
#endif

/// The progress of a long operator command (`repair`, `migrate`,
/// `migrate-passwords`, `search-index`, `copy-photos-to-s3` on a million
/// rows) on stderr: done of total, rate and time left, redrawn in place
/// four times a second on a terminal; otherwise (a pipe, a log) a line a
/// second in, then one every five seconds; what the command found or did stays on stdout. And its stop: SIGINT (Ctrl-C) or SIGTERM asks it to end between two
/// steps, with nothing half-done, so that the same command run again goes
/// on where it stopped.
final class TaskProgress {
    static let stopSignals = [SIGINT, SIGTERM]
    /// Exit status of a command stopped this way (a shell's for SIGINT).
    static let stoppedStatus: Int32 = 130

    private let task: String
    private let intervalMillis: Int64
    private let terminal: Bool
    private let clock: any TimeSource
    private let started: Int64
    private var lastLine: Int64
    /// The phase the rate and the time left are measured over, and its start.
    private var phase = (name: "", started: Int64(0))
    /// A terminal's progress line, drawn without its end: ended before anything else is written.
    nonisolated(unsafe) private static var lineOpen = false

    /// Holds the stop signals back for the rest of the process's life: they
    /// wait until the task looks (`stopRequested`), and never break a
    /// database call in the middle.
    init(_ task: String, terminal: Bool = isatty(2) == 1, intervalMillis: Int64? = nil, clock: any TimeSource = MonotonicClock()) {
        self.task = task
        self.clock = clock
        started = clock.now.millis
        self.terminal = terminal
        self.intervalMillis = intervalMillis ?? (terminal ? 250 : 5000)
        // Not on a terminal, the first line a second in: a short run says something too.
        lastLine = intervalMillis == nil && !terminal ? started - 4000 : started
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
        let now = clock.now.millis
        guard now - lastLine >= intervalMillis else { return }
        lastLine = now
        show("\(task): \(text)", final: false)
    }

    /// A line for `phase` if the last one is a second old.
    func update(_ phase: String, done: Int, of total: Int? = nil) {
        let now = clock.now.millis
        // Its first step's time, to the millisecond: the rate is the phase's own.
        if phase != self.phase.name { self.phase = (phase, now) }
        guard now - lastLine >= intervalMillis else { return }
        lastLine = now
        show(line(phase, done: done, of: total, now: now), final: false)
    }

    /// The phase's last line, whatever the time.
    func finish(_ phase: String, done: Int, of total: Int? = nil) {
        lastLine = clock.now.millis
        show(line(phase, done: done, of: total, now: lastLine), final: true)
    }

    /// On a terminal the line replaces the one before (`\r`, erase to the
    /// end), and stays open until the phase's last one.
    private func show(_ text: String, final: Bool) {
        let bytes = terminal ? "\r" + text + "\u{1B}[K" + (final ? "\n" : "") : text + "\n"
        _ = Array(bytes.utf8).withUnsafeBytes { writeAll(2, $0) }
        Self.lineOpen = terminal && !final
    }

    /// A line on stdout at once (print would hold it in a buffer when
    /// stdout is a pipe or a file: an operator's `tee`, a test).
    static func say(_ text: String) {
        if lineOpen {
            lineOpen = false
            _ = Array("\n".utf8).withUnsafeBytes { writeAll(2, $0) }
        }
        _ = Array((text + "\n").utf8).withUnsafeBytes { writeAll(1, $0) }
    }

    /// What to say when a stop was asked for.
    func stoppedMessage(_ what: String) -> String {
        "\(task): stopped (\(what)); nothing is half-done: run the same command again to go on"
    }

    private func line(_ phase: String, done: Int, of total: Int?, now: Int64) -> String {
        if phase != self.phase.name { self.phase = (phase, started) }
        return Self.line(task, phase, done: done, of: total, elapsedMillis: now - self.phase.started)
    }

    /// `repair: making thumbnails: 1200 of 6000 (20%), 400/s, about 12 s left`.
    static func line(_ task: String, _ phase: String, done: Int, of total: Int?, elapsedMillis: Int64) -> String {
        var text = "\(task): \(phase): \(done)"
        if let total, total > 0 { text += " of \(total) (\(done * 100 / total)%)" }
        guard done > 0, elapsedMillis > 0 else { return text }
        let perSecond = Double(done) * 1000 / Double(elapsedMillis)
        text += perSecond >= 10 ? ", \(Int(perSecond))/s" : ", \(Double(Int(perSecond * 10)) / 10)/s"
        if let total, done < total {
            let seconds = Int64(total - done) * elapsedMillis / Int64(done) / 1000 + 1
            text += seconds < 120 ? ", about \(seconds) s left" : ", about \((seconds + 30) / 60) min left"
        }
        return text
    }
}
