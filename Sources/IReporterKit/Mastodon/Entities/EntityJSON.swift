#if canImport(Glibc)
import Glibc
#endif

/// What the Mastodon entities add to the JSON writer: members by name
/// (the comma written unless the member opens its object), numbers, flags
/// and Mastodon's times. `PHPJSONWriter`'s strings (`\/`, `\uXXXX`) are
/// plain JSON to every client's parser.
extension PHPJSONWriter {
    /// `"name":`, after a comma unless it is the object's first member.
    mutating func name(_ name: StaticString) {
        if let last = bytes.last, last != UInt8(ascii: "{") { raw(",") }
        raw("\"")
        raw(name)
        raw("\":")
    }

    mutating func member(_ name: StaticString, _ value: String?) {
        self.name(name)
        if let value { string(value) } else { raw("null") }
    }

    /// Text that may not be UTF-8 (a title stored by the PHP version): read
    /// as `StoredText` reads it rather than the whole value as null.
    mutating func member(_ name: StaticString, text: [UInt8]) {
        self.name(name)
        string(StoredText.text(text))
    }

    mutating func member(_ name: StaticString, _ value: Int64) {
        self.name(name)
        raw(json: String(value))
    }

    mutating func member(_ name: StaticString, _ value: Bool) {
        self.name(name)
        value ? raw("true") : raw("false")
    }

    /// An id as Mastodon writes it: a string of digits.
    mutating func member(_ name: StaticString, id: Int64?) {
        member(name, id.map { String($0) })
    }

    /// Mastodon's time, ISO 8601 in UTC with milliseconds; null for none.
    mutating func member(_ name: StaticString, time seconds: Int64?) {
        member(name, seconds.map(MastodonTime.iso8601))
    }

    /// `"name":[]`
    mutating func emptyList(_ name: StaticString) {
        self.name(name)
        raw("[]")
    }
}

/// Mastodon's times: `2026-12-02T14:42:15.000Z`.
public enum MastodonTime {
    public static func iso8601(_ seconds: Int64) -> String {
        let parts = utc(seconds)
        return "\(date(seconds))T\(digits(parts.tm_hour, 2)):\(digits(parts.tm_min, 2)):\(digits(parts.tm_sec, 2)).000Z"
    }

    /// The day alone, `2026-12-02` (an account's `last_status_at`).
    public static func date(_ seconds: Int64) -> String {
        let parts = utc(seconds)
        return "\(digits(parts.tm_year + 1900, 4))-\(digits(parts.tm_mon + 1, 2))-\(digits(parts.tm_mday, 2))"
    }

    private static func utc(_ seconds: Int64) -> tm {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return parts
    }

    private static func digits(_ value: Int32, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// The day of `seconds` at midnight UTC (Mastodon's accounts' `created_at`).
    public static func day(of seconds: Int64) -> Int64 {
        seconds - ((seconds % 86_400) + 86_400) % 86_400
    }
}
