/// A photo's secret (sql/migrations/006): ten lowercase hex digits, 40
/// random bits, in the names of its files in the photos' tree and in their
/// URLs, so that its sizes cannot be found by counting ids. Flickr's format;
/// the original size (`o`) uses the same secret (ours is public under
/// `upload/<id>.jpg` anyway while legacy URLs are on).
public struct PhotoSecret: Sendable, Hashable, CustomStringConvertible {
    public static let length = 10
    public let description: String

    /// Exactly ten of `0-9a-f`, or nil.
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == Self.length, text.utf8.allSatisfy({ Self.isHexDigit($0) }) else { return nil }
        description = String(text)
    }

    /// A new secret from the system's cryptographic generator (getrandom).
    public static func random() -> PhotoSecret {
        var generator = SystemRandomNumberGenerator()
        let bits = generator.next() & 0xFF_FFFF_FFFF
        let hex = String(bits, radix: 16)
        return PhotoSecret(String(repeating: "0", count: length - hex.count) + hex)!
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}
