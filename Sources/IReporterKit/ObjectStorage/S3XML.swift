#if canImport(Glibc)
import Glibc
#endif

/// The little of S3's XML answers the client reads: element texts, in order.
enum S3XML {
    /// Every `<name>…</name>` text of `xml`, in order.
    static func elements(_ name: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = xml[...]
        while let open = rest.firstRange(of: "<\(name)>"), let close = rest[open.upperBound...].firstRange(of: "</\(name)>") {
            found.append(unescape(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return found
    }

    /// The five predefined entities; S3 writes no others in keys and messages.
    static func unescape(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        return String(text).replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
            .replacing("&apos;", with: "'").replacing("&amp;", with: "&")
    }

    /// `2026-12-01T19:40:25.000Z` (ISO 8601 in UTC, as S3 writes times) in
    /// seconds since 1970.
    static func seconds(_ time: String) -> Int? {
        let parts = time.split(whereSeparator: { "-T:.Z".contains($0) }).prefix(6).compactMap { Int($0) }
        guard parts.count == 6 else { return nil }
        var fields = tm()
        (fields.tm_year, fields.tm_mon, fields.tm_mday) = (Int32(parts[0] - 1900), Int32(parts[1] - 1), Int32(parts[2]))
        (fields.tm_hour, fields.tm_min, fields.tm_sec) = (Int32(parts[3]), Int32(parts[4]), Int32(parts[5]))
        return timegm(&fields)
    }
}
