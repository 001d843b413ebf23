#if canImport(Glibc)
import Glibc
#endif

/// One line per event on stderr (journald, Apache's error log or a file the
/// operator redirects it to). write(2) is atomic per line for every thread.
/// `log_level` drops the lines below it; `log_format = json` writes each
/// line as one JSON object (`time`, `level`, `pid`, `message`) for log
/// shippers.
public enum Log {
    public enum Level: String, CaseIterable, Comparable, Sendable {
        case info, warning, error

        private var rank: Int { Self.allCases.firstIndex(of: self)! }
        public static func < (a: Level, b: Level) -> Bool { a.rank < b.rank }
    }

    public enum Format: String, CaseIterable, Sendable {
        case text, json
    }

    /// Set once from the configuration at start (and on reload), before any worker is forked.
    nonisolated(unsafe) private(set) static var level = Level.info
    nonisolated(unsafe) private(set) static var format = Format.text

    /// In a worker: the request it is serving, if any (the scoreboard's
    /// note, read only when an error is written), so that an error line says
    /// which request met it (`while serving POST /iReporter/ (request …)`).
    nonisolated(unsafe) static var currentRequest: (() -> String?)?

    /// While the server starts with `log_file` set: the stderr it was given
    /// (a terminal, spawn-fcgi's, the journal), where errors are written too,
    /// so that a start that fails does not exit in silence; -1 otherwise.
    nonisolated(unsafe) private static var startingStderr: Int32 = -1

    public static func configure(level: Level, format: Format) {
        Self.level = level
        Self.format = format
    }

    public static func error(_ message: String) { emit(.error, message) }
    public static func warning(_ message: String) { emit(.warning, message) }
    public static func info(_ message: String) { emit(.info, message) }

    private static func emit(_ level: Level, _ message: String) {
        guard level >= Self.level else { return }
        // Errors only: the warnings fail2ban reads keep their shape.
        let request = level == .error ? currentRequest?() : nil
        let line = line(level, message, format: format, time: timestamp(), pid: getpid(), request: request)
        _ = Array(line.utf8).withUnsafeBytes { writeAll(2, $0) }
        if level == .error, startingStderr >= 0 { _ = Array(line.utf8).withUnsafeBytes { writeAll(startingStderr, $0) } }
    }

    static func line(_ level: Level, _ message: String, format: Format, time: String, pid: Int32, request: String? = nil) -> String {
        switch format {
        case .text:
            "\(time) ireporter[\(pid)] \(level.rawValue): \(message)" + (request.map { " (while serving \($0))" } ?? "") + "\n"
        case .json:
            json([("time", .text(time)), ("level", .text(level.rawValue)), ("pid", .number(Int(pid))), ("message", .text(message))]
                 + (request.map { [("request", .text($0))] } ?? []))
        }
    }

    /// One JSON object on one line: valid JSON whatever the strings hold
    /// (control characters, quotes, invalid UTF-8 already replaced by Swift).
    static func json(_ fields: [(String, Value)]) -> String {
        var out = "{"
        for (index, (key, value)) in fields.enumerated() {
            if index > 0 { out += "," }
            out += quoted(key) + ":"
            switch value {
            case .text(let text): out += quoted(text)
            case .number(let number): out += String(number)
            case .decimal(let text): out += text
            }
        }
        return out + "}\n"
    }

    /// A field's value: a concrete enum, not `any Sendable`, because the
    /// access log formats one line per request (casting existentials was
    /// 6-7 % of a worker's CPU serving a cached timeline).
    enum Value: Equatable, Sendable {
        case text(String)
        case number(Int)
        /// A number already written as JSON writes it (`1.4`).
        case decimal(String)

        /// As the text format writes it: the bare value.
        var plain: String {
            switch self {
            case .text(let text), .decimal(let text): text
            case .number(let number): String(number)
            }
        }
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x2028...0x2029).contains(scalar.value):
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// `redirect` at start: errors go to the stderr given too until
    /// `started()`, unless that is the log file itself.
    public static func redirectStarting(to path: String) -> Bool {
        let given = fcntl(2, F_DUPFD_CLOEXEC, 3)
        guard redirect(to: path) else {
            if given >= 0 { close(given) }
            return false
        }
        var before = stat(), after = stat()
        if given >= 0, fstat(given, &before) == 0, fstat(2, &after) == 0, before.st_dev == after.st_dev, before.st_ino == after.st_ino {
            close(given)
        } else {
            startingStderr = given
        }
        return true
    }

    /// The server started (or gave up): errors go to the log file alone.
    public static func started() {
        if startingStderr >= 0 { close(startingStderr) }
        startingStderr = -1
    }

    /// Points stderr at `path` (appending): at start-up and on SIGUSR1, so
    /// that logrotate can move the old file away.
    public static func redirect(to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { return false }
        // Started with stderr closed (`2>&-`), the file is fd 2 itself.
        guard fd != 2 else { return fcntl(2, F_SETFD, 0) == 0 }
        dup2(fd, 2)
        close(fd)
        return true
    }

    /// `redirect` on SIGUSR1, run as `user`: a file that cannot be made
    /// (its folder not writable by `user`) is said in the file still open,
    /// where logging goes on, rather than nowhere.
    @discardableResult
    public static func reopen(_ path: String) -> Bool {
        guard !redirect(to: path) else { return true }
        error("log_file \(path): \(SystemError("reopen")): logging goes on in the file open before (its folder must be writable by the server's user)")
        return false
    }

    /// UTC, ISO 8601, to the second.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        let stamp = String(Int(parts.tm_year) + 1900) + "-" + String(pad2: Int(parts.tm_mon) + 1) + "-"
            + String(pad2: Int(parts.tm_mday)) + "T" + String(pad2: Int(parts.tm_hour)) + ":"
            + String(pad2: Int(parts.tm_min)) + ":" + String(pad2: Int(parts.tm_sec)) + "Z"
        return stamp
    }
}

extension String {
    fileprivate init(pad2 value: Int) { self = value < 10 ? "0\(value)" : "\(value)" }
}
