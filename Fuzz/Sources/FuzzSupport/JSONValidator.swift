/// A strict RFC 8259 validator (and string decoder) for checking that
/// `PHPJSONWriter` output is JSON. Independent of the writer: written from
/// the grammar, not from the writer's code.
public struct JSONValidator {
    let text: [UInt8]
    var position = 0
    /// The decoded contents of every string value met, in order (as UTF-8;
    /// nil for a string whose escapes form a lone surrogate).
    public private(set) var strings: [[UInt8]?] = []

    public init(_ text: [UInt8]) { self.text = text }

    /// Whether the whole text is exactly one JSON value (with optional
    /// surrounding white space).
    public mutating func validate() -> Bool {
        position = 0
        strings = []
        skipSpace()
        guard value(depth: 0) else { return false }
        skipSpace()
        return position == text.count
    }

    private var current: UInt8? { position < text.count ? text[position] : nil }

    private mutating func skipSpace() {
        while let c = current, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { position += 1 }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let bytes = word.withUTF8Buffer { Array($0) }
        guard position + bytes.count <= text.count, Array(text[position..<(position + bytes.count)]) == bytes else { return false }
        position += bytes.count
        return true
    }

    private mutating func value(depth: Int) -> Bool {
        guard depth < 512, let c = current else { return false }
        switch c {
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "["):
            position += 1
            skipSpace()
            if current == UInt8(ascii: "]") { position += 1; return true }
            while true {
                skipSpace()
                guard value(depth: depth + 1) else { return false }
                skipSpace()
                if current == UInt8(ascii: ",") { position += 1; continue }
                if current == UInt8(ascii: "]") { position += 1; return true }
                return false
            }
        case UInt8(ascii: "{"):
            position += 1
            skipSpace()
            if current == UInt8(ascii: "}") { position += 1; return true }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\""), string() else { return false }
                skipSpace()
                guard current == UInt8(ascii: ":") else { return false }
                position += 1
                skipSpace()
                guard value(depth: depth + 1) else { return false }
                skipSpace()
                if current == UInt8(ascii: ",") { position += 1; continue }
                if current == UInt8(ascii: "}") { position += 1; return true }
                return false
            }
        default: return number()
        }
    }

    private static func isDigit(_ c: UInt8?) -> Bool { c.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }

    private mutating func number() -> Bool {
        if current == UInt8(ascii: "-") { position += 1 }
        if current == UInt8(ascii: "0") {
            position += 1
        } else if let c = current, c >= 0x31 && c <= 0x39 {
            while Self.isDigit(current) { position += 1 }
        } else { return false }
        if current == UInt8(ascii: ".") {
            position += 1
            guard Self.isDigit(current) else { return false }
            while Self.isDigit(current) { position += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard Self.isDigit(current) else { return false }
            while Self.isDigit(current) { position += 1 }
        }
        return true
    }

    private static func hexDigit(_ c: UInt8) -> UInt16? {
        switch c {
        case 0x30...0x39: UInt16(c - 0x30)
        case 0x41...0x46: UInt16(c - 0x41 + 10)
        case 0x61...0x66: UInt16(c - 0x61 + 10)
        default: nil
        }
    }

    /// A string token; its decoded text is appended to `strings`.
    private mutating func string() -> Bool {
        position += 1 // opening quote
        var units: [UInt16] = []
        var raw: [UInt8] = [] // unescaped UTF-8 runs are validated as UTF-8
        func flushRaw() -> Bool {
            guard !raw.isEmpty else { return true }
            guard let s = String(validating: raw, as: UTF8.self) else { return false }
            units += s.utf16
            raw = []
            return true
        }
        while true {
            guard let c = current else { return false }
            position += 1
            switch c {
            case UInt8(ascii: "\""):
                guard flushRaw() else { return false }
                var decoded: [UInt8]? = []
                for scalar in UTF16Scalars(units) {
                    guard let scalar else { decoded = nil; break }
                    decoded! += Array(String(Character(scalar)).utf8)
                }
                strings.append(decoded)
                return true
            case UInt8(ascii: "\\"):
                guard flushRaw(), let e = current else { return false }
                position += 1
                switch e {
                case UInt8(ascii: "\""): units.append(0x22)
                case UInt8(ascii: "\\"): units.append(0x5C)
                case UInt8(ascii: "/"): units.append(0x2F)
                case UInt8(ascii: "b"): units.append(0x08)
                case UInt8(ascii: "f"): units.append(0x0C)
                case UInt8(ascii: "n"): units.append(0x0A)
                case UInt8(ascii: "r"): units.append(0x0D)
                case UInt8(ascii: "t"): units.append(0x09)
                case UInt8(ascii: "u"):
                    guard position + 4 <= text.count else { return false }
                    var unit: UInt16 = 0
                    for i in 0..<4 {
                        guard let d = Self.hexDigit(text[position + i]) else { return false }
                        unit = unit << 4 | d
                    }
                    position += 4
                    units.append(unit)
                default: return false
                }
            case 0x00..<0x20: return false // control characters must be escaped
            default: raw.append(c)
            }
        }
    }
}

/// UTF-16 code units to scalars; nil for a lone surrogate.
struct UTF16Scalars: Sequence, IteratorProtocol {
    let units: [UInt16]
    var index = 0
    init(_ units: [UInt16]) { self.units = units }
    mutating func next() -> Unicode.Scalar?? {
        guard index < units.count else { return nil }
        let unit = units[index]
        index += 1
        if unit < 0xD800 || unit > 0xDFFF { return .some(Unicode.Scalar(unit)) }
        guard unit <= 0xDBFF, index < units.count, (0xDC00...0xDFFF).contains(units[index]) else { return .some(nil) }
        let low = units[index]
        index += 1
        let value = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00)
        return .some(Unicode.Scalar(value))
    }
}
