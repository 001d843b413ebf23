/// Percent-encoding (RFC 3986 §2.1): every byte but the unreserved
/// characters, as `%XX` in upper-case hex. S3's query and path, OAuth's
/// redirect parameters.
enum URLEncoding {
    /// `slash`: what `/` becomes (S3 keeps it in a path).
    static func percentEncoded(_ text: String, slash: String = "%2F") -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        for byte in text.utf8 {
            if (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E {
                encoded.append(byte)
            } else if byte == 0x2F {
                encoded += Array(slash.utf8)
            } else {
                encoded += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }
}
