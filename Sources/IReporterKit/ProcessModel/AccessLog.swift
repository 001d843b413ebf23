#if canImport(Glibc)
import Glibc
#endif

/// One line per request (off by default): to stderr or to a file that
/// SIGUSR1 reopens (for logrotate).
final class AccessLog {
    private let destination: String
    private var fd: Int32 = -1

    init(configuration: Configuration) {
        destination = configuration.accessLog
        reopen()
    }

    func reopen() {
        if fd > 2 { close(fd) }
        switch destination {
        case "": fd = -1
        case "stderr": fd = 2
        default:
            fd = open(destination, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
            if fd < 0 { Log.error("cannot open access log \(destination): \(String(cString: strerror(errno)))") }
        }
    }

    func write(_ record: APIResponder.Record) {
        guard fd >= 0 else { return }
        let line = Array((Log.timestamp() + " " + Self.describe(record) + "\n").utf8)
        _ = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    static func describe(_ record: APIResponder.Record) -> String {
        func millis(_ micros: Int64) -> String {
            let tenths = (micros + 50) / 100
            return "\(tenths / 10).\(tenths % 10)"
        }
        return "client=\(record.client) method=\(record.method) uri=\(record.uri) command=\(record.command) bytes=\(record.bytes)"
            + " total_ms=\(millis(record.totalMicros)) parse_ms=\(millis(record.parseMicros))"
            + " db_ms=\(millis(record.databaseMicros)) image_ms=\(millis(record.imageMicros))"
            + " request_id=\(record.requestID) pid=\(getpid())"
    }
}
