#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// Session ids: PHP's alphabet, and fresh ones from the CSPRNG.
public enum SessionID {
    /// PHP's session-id alphabet (`[a-zA-Z0-9,-]`); ids are 22 to 250 long
    /// (PHP's `session.sid_length` goes to 256, but its files handler's
    /// `sess_` + id must fit a file name's 255 bytes: the ids a PHP site
    /// can have). Anything else (`../`, NUL, 10 KB) never reaches a store.
    public static let lengths = 22...250

    public static func isWellFormed(_ id: [UInt8]) -> Bool {
        guard lengths.contains(id.count) else { return false }
        return id.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ",") || byte == UInt8(ascii: "-")
        }
    }

    /// 32 characters of `[0-9a-v]` (160 bits) from getrandom(2): the same
    /// alphabet as PHP's default `session.sid_bits_per_character = 5`.
    public static func new() -> String {
        var random = [UInt8](repeating: 0, count: 32)
        let status = random.withUnsafeMutableBytes { csystem_random_bytes($0.baseAddress!, $0.count) }
        precondition(status == 0, "getrandom failed: \(errno)")
        let alphabet = Array("0123456789abcdefghijklmnopqrstuv".utf8)
        return String(decoding: random.map { alphabet[Int($0 & 31)] }, as: UTF8.self)
    }
}
