/// `value; key=val; key="quoted val"` as in Content-Type and Content-Disposition.
struct HeaderParameters {
    var value: String
    private var parameters: [String: [UInt8]] = [:]

    subscript(key: String) -> [UInt8]? { parameters[key] }

    init(_ bytes: [UInt8]) {
        var items: [[UInt8]] = []
        var current: [UInt8] = []
        var inQuotes = false
        var escaped = false
        for byte in bytes {
            if inQuotes && escaped { current.append(byte); escaped = false; continue }
            if inQuotes && byte == UInt8(ascii: "\\") { escaped = true; current.append(byte); continue }
            if byte == UInt8(ascii: "\"") { inQuotes.toggle() }
            if byte == UInt8(ascii: ";") && !inQuotes { items.append(current); current = []; continue }
            current.append(byte)
        }
        items.append(current)
        value = String(decoding: Self.trimmed(items.removeFirst()), as: UTF8.self)
        for item in items {
            guard let equals = item.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: Self.trimmed(Array(item[..<equals])), as: UTF8.self).lowercased()
            var raw = Self.trimmed(Array(item[(equals + 1)...]))
            if raw.count >= 2, raw.first == UInt8(ascii: "\""), raw.last == UInt8(ascii: "\"") {
                raw = Self.unescapeQuoted(Array(raw.dropFirst().dropLast()))
            }
            if parameters[key] == nil { parameters[key] = raw }
        }
    }

    static func trimmed(_ bytes: [UInt8]) -> [UInt8] {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
              let last = bytes.lastIndex(where: { !isSpace($0) }) else { return [] }
        return Array(bytes[first...last])
    }

    private static func unescapeQuoted(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var escaped = false
        for byte in bytes {
            if !escaped && byte == UInt8(ascii: "\\") { escaped = true; continue }
            escaped = false
            out.append(byte)
        }
        return out
    }
}
