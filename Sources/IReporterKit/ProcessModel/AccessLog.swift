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

    /// A file that cannot be made (its folder not writable by the server's
    /// user) is said, and the lines go on into the file open before, as
    /// `Log.reopen` does for the server's own log.
    func reopen() {
        switch destination {
        case "": fd = -1
        case "stderr": fd = 2
        default:
            let opened = open(destination, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
            guard opened >= 0 else {
                Log.error("cannot open access log \(destination): \(String(cString: strerror(errno)))"
                          + (fd >= 0 ? "; its lines go on in the file open before" : ""))
                return
            }
            if fd > 2 { close(fd) }
            fd = opened
        }
    }

    func write(_ record: APIResponder.Record) {
        guard fd >= 0 else { return }
        let line = Array(Self.line(record, format: Log.format, time: Log.timestamp()).utf8)
        _ = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    /// `key=value` fields after the time, or (`log_format = json`) one JSON
    /// object with the same keys and `time` first.
    static func line(_ record: APIResponder.Record, format: Log.Format, time: String) -> String {
        switch format {
        case .text: time + " " + describe(record) + "\n"
        case .json: Log.json([("time", .text(time))] + fields(record))
        }
    }

    static func describe(_ record: APIResponder.Record) -> String {
        var line = ""
        for (index, (key, value)) in fields(record).enumerated() {
            if index > 0 { line += " " }
            line += key + "=" + value.plain
        }
        return line
    }

    private static func fields(_ record: APIResponder.Record) -> [(String, Log.Value)] {
        func millis(_ micros: Int64) -> Log.Value {
            let tenths = (micros + 50) / 100
            return .decimal(String(tenths / 10) + "." + String(tenths % 10))
        }
        return [("client", .text(record.client)), ("method", .text(record.method)), ("uri", .text(withoutSecrets(record.uri))),
                ("command", .text(record.command)), ("call", .text(record.call)), ("outcome", .text(record.outcome)),
                ("bytes", .number(record.bytes)), ("total_ms", millis(record.totalMicros)), ("parse_ms", millis(record.parseMicros)),
                ("db_ms", millis(record.databaseMicros)), ("image_ms", millis(record.imageMicros)),
                ("request_id", .text(record.requestID)), ("pid", .number(Int(getpid())))]
    }

    /// The URI with the value of each secret in its query written
    /// `FILTERED`, as Rails and Mastodon log them: a token (the Mastodon API
    /// takes `access_token` there too), a password, a client secret, an
    /// authorization code or its verifier, whatever the spelling of the name
    /// (it is read decoded, as the server reads it). A log is read by people
    /// who must not act as its users.
    static func withoutSecrets(_ uri: String) -> String {
        guard let query = uri.firstIndex(of: "?") else { return uri }
        let pairs = uri[uri.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { pair in
            guard let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first,
                  isSecret(String(decoding: PHPStrings.urlDecode(Array(name.utf8)), as: UTF8.self).lowercased()) else { return pair }
            return name + "=FILTERED"
        }
        return uri[...query] + pairs.joined(separator: "&")
    }

    private static func isSecret(_ name: String) -> Bool {
        ["token", "passw", "secret"].contains { name.contains($0) } || name == "code" || name.hasPrefix("code_verifier")
    }

    /// A value the client chose (a command, a method, a request id), as one
    /// field of the line: letters, digits and `._-:@` as they are, every
    /// other byte `%XX`, at most 64 bytes of it; `-` when empty.
    static func field(_ value: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in value.utf8.prefix(64) {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "@"):
                out.append(byte)
            default: out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return out.isEmpty ? "-" : String(decoding: out, as: UTF8.self)
    }
}
