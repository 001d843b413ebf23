/// The lines a ban tool (deploy/fail2ban) reads: one warning per failed
/// login and per throttle refusal, in a format docs/SECURITY.md fixes. The
/// client address ends the line; the username is quoted with `"`, `\` and
/// every byte outside printable ASCII escaped, so no name can end the line
/// early or put another address where the filter looks.
public enum SecurityLog {
    static func loginFailed(username: [UInt8], address: String) {
        Log.warning("login failed for \(quoted(username)) from \(address)")
    }

    static func loginThrottled(username: [UInt8], seconds: Int64, address: String) {
        Metrics.count(.loginThrottled)
        Log.warning("login refused (throttled \(seconds) s) for \(quoted(username)) from \(address)")
    }

    static func registrationThrottled(seconds: Int64, address: String) {
        Metrics.count(.registrationThrottled)
        Log.warning("registration refused (throttled \(seconds) s) from \(address)")
    }

    /// A name's bytes shown at most: a login may send a megabyte of name,
    /// and each refusal writes a line (a throttled one costs no hash).
    static let maxNameBytes = 64

    /// `bytes` quoted; beyond `maxNameBytes`, `\+N` before the closing quote
    /// says how many more were sent (no escape of a name starts so).
    static func quoted(_ bytes: [UInt8]) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in bytes.prefix(maxNameBytes) {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0x20..<0x7F: out.append(byte)
            default: out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        if bytes.count > maxNameBytes { out += Array("\\+\(bytes.count - maxNameBytes)".utf8) }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }
}
