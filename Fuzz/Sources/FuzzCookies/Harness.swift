import FuzzSupport
import IReporterKit

// Cookies.parse on a Cookie header (HTTP_COOKIE arrives as a C string, so it
// ends at the first NUL), against a reference written from its documented
// rules; then the PHPSESSID cookie through SessionID.isWellFormed, the
// gate before any session file is touched: a well-formed id must be a safe
// single path component.

func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }

func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var slice = bytes
    while let first = slice.first, isSpace(first) { slice.removeFirst() }
    while let last = slice.last, isSpace(last) { slice.removeLast() }
    return slice
}

func referenceCookies(_ header: [UInt8]) -> [String: [UInt8]] {
    var out: [String: [UInt8]] = [:]
    var pairStart = 0
    for end in 0...header.count where end == header.count || header[end] == 0x3B {
        let pair = header[pairStart..<end]
        pairStart = end + 1
        guard let equals = pair.firstIndex(of: 0x3D) else { continue }
        let name = String(decoding: trimmed(pair[..<equals]), as: UTF8.self)
        if name.isEmpty || out[name] != nil { continue }
        out[name] = PHPStrings.urlDecode(trimmed(pair[(equals + 1)...]))
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = bytes(data, size)
    let header = String(decoding: input.prefix { $0 != 0 }, as: UTF8.self)
    let cookies = Cookies.parse(header)
    let reference = referenceCookies(Array(header.utf8))
    check(cookies == reference, "Cookies.parse(\(show(Array(header.utf8)))) = \(cookies), expected \(reference)")
    check(Cookies.parse(nil).isEmpty, "Cookies.parse(nil) is not empty")
    for name in cookies.keys {
        check(!name.isEmpty && !isSpace(name.utf8.first!) && !isSpace(name.utf8.last!), "untrimmed cookie name \(show(Array(name.utf8)))")
        check(!name.utf8.contains(0x3B) && !name.utf8.contains(0x3D), "cookie name with ; or =: \(show(Array(name.utf8)))")
    }
    if let id = cookies["PHPSESSID"], SessionID.isWellFormed(id) {
        let path = String(decoding: id, as: UTF8.self)
        check(!id.contains(0x2F) && !id.contains(0) && !id.contains(0x2E) && SessionID.lengths.contains(id.count),
              "unsafe session id accepted: \(show(id))")
        check(Array(path.utf8) == id, "a well-formed id is not ASCII")
    }
    return 0
}
