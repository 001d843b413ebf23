#if canImport(Glibc)
import Glibc
#endif

/// One line per event on stderr (journald, Apache's error log or a file the
/// operator redirects it to). write(2) is atomic per line for every thread.
public enum Log {
    public static func error(_ message: String) { emit("error", message) }
    public static func warning(_ message: String) { emit("warning", message) }
    public static func info(_ message: String) { emit("info", message) }

    private static func emit(_ level: String, _ message: String) {
        let line = "\(timestamp()) ireporter[\(getpid())] \(level): \(message)\n"
        _ = Array(line.utf8).withUnsafeBytes { writeAll(2, $0) }
    }

    /// Points stderr at `path` (appending): at start-up and on SIGUSR1, so
    /// that logrotate can move the old file away.
    public static func redirect(to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { return false }
        dup2(fd, 2)
        close(fd)
        return true
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
