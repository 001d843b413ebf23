/// Builds JSON exactly as PHP's `json_encode()` (default flags plus
/// JSON_PARTIAL_OUTPUT_ON_ERROR) prints it: `/` escaped as `\/`, every
/// non-ASCII character as a lower-case `\uXXXX` (UTF-16, so surrogate pairs
/// above U+FFFF), and a string that is not valid UTF-8 as `null`.
public struct PHPJSONWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// JSON made elsewhere (a schema), as it is.
    public mutating func raw(json text: String) { bytes.append(contentsOf: text.utf8) }
    public mutating func raw(json text: [UInt8]) { bytes.append(contentsOf: text) }

    public mutating func string<C: Collection>(_ value: C) where C.Element == UInt8 {
        let mark = bytes.count
        let valid = value.withContiguousStorageIfAvailable { appendEscaped($0) } ?? Array(value).withUnsafeBufferPointer { appendEscaped($0) }
        if !valid {
            bytes.removeSubrange(mark...)
            raw("null")
        }
    }

    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string($0) }
    }

    /// A database value: NULL is `null`.
    public mutating func nullableString(_ value: [UInt8]?) {
        if let value { string(value) } else { raw("null") }
    }

    /// Appends `"…"`; false (with partial output left behind) on invalid UTF-8.
    /// Runs of printable ASCII that need no escape are copied as they are
    /// (most of what is written: names, URLs, numbers as text); the rest is
    /// decoded a scalar at a time.
    private mutating func appendEscaped(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.append(UInt8(ascii: "\""))
        var index = 0
        while index < value.count {
            var end = index
            while end < value.count, Self.isPlain(value[end]) { end += 1 }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: value[index..<end]))
            index = end
            guard index < value.count else { break }
            var iterator = value[index...].makeIterator()
            var decoder = UTF8()
            guard case .scalarValue(let scalar) = decoder.decode(&iterator) else { return false }
            appendScalar(scalar)
            index += UTF8.width(scalar)
        }
        bytes.append(UInt8(ascii: "\""))
        return true
    }

    /// Printable ASCII that PHP writes as it is: not `"`, the backslash or `/`.
    private static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x80 && byte != 0x22 && byte != 0x5C && byte != 0x2F
    }

    private mutating func appendScalar(_ scalar: Unicode.Scalar) {
        switch scalar.value {
        case 0x22: raw("\\\"")
        case 0x5C: raw("\\\\")
        case 0x2F: raw("\\/")
        case 0x08: raw("\\b")
        case 0x0C: raw("\\f")
        case 0x0A: raw("\\n")
        case 0x0D: raw("\\r")
        case 0x09: raw("\\t")
        case 0..<0x20: appendUnicodeEscape(UInt16(scalar.value))
        case 0x20..<0x80: bytes.append(UInt8(scalar.value))
        default:
            for unit in UTF16.encode(scalar)! { appendUnicodeEscape(unit) }
        }
    }

    private mutating func appendUnicodeEscape(_ unit: UInt16) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"),
                                  hex[Int(unit >> 12)], hex[Int(unit >> 8 & 0xF)],
                                  hex[Int(unit >> 4 & 0xF)], hex[Int(unit & 0xF)]])
    }
}
