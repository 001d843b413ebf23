/// A secret OAuth hands out: an access token, an authorization code, an
/// app's client_secret (and its public client_id, made the same way). 32
/// bytes from the system's cryptographic generator, written URL-safe (43
/// characters). The database keeps only `hash`: whoever reads the tables
/// (a backup, a replica) cannot use a token. A plain SHA-256 is enough, and
/// lets a token be found by its hash on every request: the secret has 256
/// random bits, so there is no guess to slow down, unlike a password.
public enum OAuthSecret {
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<4).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
        return Base64.urlSafeEncode(bytes)
    }

    /// What is stored and looked up: SHA-256, 64 lower-case hex digits.
    public static func hash(_ secret: some StringProtocol) -> String { hash(Array(secret.utf8)) }

    public static func hash(_ secret: [UInt8]) -> String { Digest.sha256.hexString(secret) }
}

/// Proof Key for Code Exchange (RFC 7636): the authorization request carries
/// a challenge, the token request the verifier it was made from, so a code
/// caught on its way back (another app registered for the same custom URL
/// scheme) is useless without the verifier.
public enum PKCEMethod: String, Sendable, CaseIterable {
    /// BASE64URL(SHA-256(verifier)) == challenge.
    case s256 = "S256"
    /// verifier == challenge (RFC 7636 allows it; clients that cannot hash).
    case plain

    /// §4.1: 43 to 128 of `[A-Za-z0-9-._~]`; the challenge has the same form.
    public static func isWellFormed(_ value: some StringProtocol) -> Bool {
        (43...128).contains(value.utf8.count) && value.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"): true
            default: false
            }
        }
    }

    /// Whether `verifier` is the one `challenge` was made from.
    public func verifies(_ verifier: String, challenge: String) -> Bool {
        guard Self.isWellFormed(verifier) else { return false }
        let expected = switch self {
        case .s256: Base64.urlSafeEncode(Digest.sha256.digest(Array(verifier.utf8)))
        case .plain: verifier
        }
        return PasswordHasher.constantTimeEqual(Array(expected.utf8), Array(challenge.utf8))
    }
}
