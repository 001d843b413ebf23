#if canImport(Glibc)
import Glibc
#endif
import FuzzSupport
import IReporterKit

// PHPStrings.urlDecode and PHPStrings.intCast against independent reference
// implementations written from PHP's C sources (ext/standard/url.c
// php_url_decode; Zend/zend_operators.c _is_numeric_string_ex +
// zend_dval_to_lval_cap), plus SessionID.isWellFormed against its rule.
// Properties: decoding a slice equals decoding a copy; any byte string,
// percent-encoded, decodes back to itself; intCast ignores leading white
// space and trailing garbage, and reads back any Int64 it is given.

func referenceURLDecode(_ s: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    var i = 0
    func hex(_ c: UInt8) -> UInt8? {
        if c >= 0x30 && c <= 0x39 { return c - 0x30 }
        let lower = c | 0x20
        if lower >= 0x61 && lower <= 0x66 { return lower - 0x61 + 10 }
        return nil
    }
    while i < s.count {
        if s[i] == 0x2B {
            out.append(0x20)
        } else if s[i] == 0x25, i + 2 < s.count, let h = hex(s[i + 1]), let l = hex(s[i + 2]) {
            out.append(h << 4 | l)
            i += 2
        } else {
            out.append(s[i])
        }
        i += 1
    }
    return out
}

/// PHP 8's `(int)$string`.
func referenceIntCast(_ s: [UInt8]) -> Int64 {
    var i = 0
    while i < s.count, [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C].contains(s[i]) { i += 1 }
    let start = i
    if i < s.count, s[i] == 0x2D || s[i] == 0x2B { i += 1 }
    func digit(_ k: Int) -> Bool { k < s.count && s[k] >= 0x30 && s[k] <= 0x39 }
    var isDouble = false
    if digit(i) {
        while digit(i) { i += 1 }
        if i < s.count, s[i] == 0x2E { isDouble = true; i += 1; while digit(i) { i += 1 } }
    } else if i < s.count, s[i] == 0x2E, digit(i + 1) {
        isDouble = true
        i += 1
        while digit(i) { i += 1 }
    } else {
        return 0
    }
    if i < s.count, s[i] == 0x65 || s[i] == 0x45 {
        var e = i + 1
        if e < s.count, s[e] == 0x2B || s[e] == 0x2D { e += 1 }
        if digit(e) { isDouble = true; i = e; while digit(i) { i += 1 } }
    }
    let text = Array(s[start..<i]) + [0]
    if !isDouble {
        // Fits in a zend_long? Otherwise PHP parses it as a double.
        errno = 0
        let value = text.withUnsafeBufferPointer { strtoll(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), nil, 10) }
        if errno != ERANGE { return Int64(value) }
    }
    let value = text.withUnsafeBufferPointer { strtod(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), nil) }
    // zend_dval_to_lval_cap: not finite -> 0, out of range -> saturate.
    if !value.isFinite { return 0 }
    if value >= 0x1p63 { return Int64.max }
    if value < -0x1p63 { return Int64.min }
    return Int64(value)
}

func referenceWellFormed(_ id: [UInt8]) -> Bool {
    let alphabet = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,-".utf8)
    return id.count >= 22 && id.count <= 250 && id.allSatisfy { alphabet.contains($0) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = bytes(data, size)

    // urldecode
    let decoded = PHPStrings.urlDecode(input)
    if dumpMode { print("urldecode\t\(hex(input))\t\(hex(decoded))") }
    check(decoded == referenceURLDecode(input), "urlDecode(\(show(input))) = \(show(decoded)), PHP: \(show(referenceURLDecode(input)))")
    check(decoded.count <= input.count, "urlDecode grew the input")
    if !input.isEmpty {
        check(PHPStrings.urlDecode(input[1...]) == PHPStrings.urlDecode(Array(input[1...])), "urlDecode of a slice differs")
    }
    var random = SplitMix64(seedingWith: input)
    var encoded: [UInt8] = []
    for byte in input {
        switch random.next(below: 3) {
        case 0 where byte == 0x20: encoded.append(0x2B)
        case 0 where byte != 0x25 && byte != 0x2B: encoded.append(byte)
        default:
            let digits = Array(random.next(below: 2) == 0 ? "0123456789ABCDEF".utf8 : "0123456789abcdef".utf8)
            encoded += [0x25, digits[Int(byte >> 4)], digits[Int(byte & 15)]]
        }
    }
    check(PHPStrings.urlDecode(encoded) == input, "urlDecode(\(show(encoded))) does not give back \(show(input))")

    // (int) cast
    let value = PHPStrings.intCast(input)
    if dumpMode { print("intcast\t\(hex(input))\t\(value)") }
    let reference = referenceIntCast(input)
    check(value == reference, "intCast(\(show(input))) = \(value), PHP: \(reference)")
    check(PHPStrings.intCast(Array(" \t\n\r\u{0B}\u{0C}".utf8) + input) == value, "leading white space changed intCast")
    check(PHPStrings.intCast(input + Array("x".utf8)) == value, "trailing garbage changed intCast")
    if input.count >= 8 {
        let n = input.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }
        check(PHPStrings.intCast(Array(String(n).utf8)) == n, "intCast(\"\(n)\") != \(n)")
    }

    // session ids
    check(SessionID.isWellFormed(input) == referenceWellFormed(input), "isWellFormed(\(show(input))) is wrong")
    return 0
}
