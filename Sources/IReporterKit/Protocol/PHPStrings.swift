/// PHP's string rules that the original API's answers depend on.
public enum PHPStrings {
    /// PHP `urldecode()`: `+` becomes a space, `%XX` (either case) becomes the
    /// byte; a `%` not followed by two hex digits is kept as is.
    public static func urlDecode<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i != bytes.endIndex {
            let byte = bytes[i]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                let first = bytes.index(after: i)
                if first != bytes.endIndex, let high = hexValue(bytes[first]) {
                    let second = bytes.index(after: first)
                    if second != bytes.endIndex, let low = hexValue(bytes[second]) {
                        out.append(high << 4 | low)
                        i = bytes.index(after: second)
                        continue
                    }
                }
                out.append(byte)
            } else {
                out.append(byte)
            }
            i = bytes.index(after: i)
        }
        return out
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// PHP 8's `(int)` cast of a string: leading white space, then the longest
    /// numeric prefix (sign, digits, fraction, exponent); anything else is 0.
    /// Values out of range saturate, as PHP does for numeric strings.
    public static func intCast(_ bytes: [UInt8]) -> Int64 {
        var i = 0
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C].contains(bytes[i]) { i += 1 }
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
        let digitsStart = i
        while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        var sawDigits = i > digitsStart
        var isFloat = false
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            var j = i + 1
            while j < bytes.count, isDigit(bytes[j]) { j += 1 }
            if j > i + 1 || sawDigits { isFloat = j > i + 1; sawDigits = true; i = j }
        }
        guard sawDigits else { return 0 }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            var j = i + 1
            if j < bytes.count, bytes[j] == UInt8(ascii: "+") || bytes[j] == UInt8(ascii: "-") { j += 1 }
            let expStart = j
            while j < bytes.count, isDigit(bytes[j]) { j += 1 }
            if j > expStart { isFloat = true; i = j }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if !isFloat, let value = Int64(text) { return value }
        // PHP: a float that is not finite converts to 0; a finite one out of
        // range saturates.
        guard let value = Double(text), value.isFinite else { return 0 }
        if value >= 9.2233720368547758e18 { return Int64.max }
        if value <= -9.2233720368547758e18 { return Int64.min }
        return Int64(value.rounded(.towardZero))
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}
