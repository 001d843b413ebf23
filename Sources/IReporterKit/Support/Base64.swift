/// Base64 (RFC 4648): the standard alphabet read (Argon2's stored hashes,
/// HTTP Basic credentials), the URL-safe one written without padding (OAuth's
/// secrets and PKCE's S256 challenge, RFC 7636 appendix A).
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSafeAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Standard alphabet, padding optional.
    static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        for byte in text.utf8 where byte != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: byte) else { return nil }
            values.append(UInt8(value))
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var index = 0
        while index + 1 < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            let a = chunk[chunk.startIndex], b = chunk[chunk.startIndex + 1]
            out.append(a << 2 | b >> 4)
            if chunk.count > 2 { out.append(b << 4 | chunk[chunk.startIndex + 2] >> 2) }
            if chunk.count > 3 { out.append(chunk[chunk.startIndex + 2] << 6 | chunk[chunk.startIndex + 3]) }
            index += 4
        }
        return out
    }

    /// URL-safe alphabet, no padding.
    static func urlSafeEncode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let a = chunk[chunk.startIndex]
            let b = chunk.count > 1 ? chunk[chunk.startIndex + 1] : 0
            let c = chunk.count > 2 ? chunk[chunk.startIndex + 2] : 0
            out.append(urlSafeAlphabet[Int(a >> 2)])
            out.append(urlSafeAlphabet[Int((a & 0x03) << 4 | b >> 4)])
            if chunk.count > 1 { out.append(urlSafeAlphabet[Int((b & 0x0F) << 2 | c >> 6)]) }
            if chunk.count > 2 { out.append(urlSafeAlphabet[Int(c & 0x3F)]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
