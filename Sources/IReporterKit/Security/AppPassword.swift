/// The password as every client sends it: what the 2012 app computes on the
/// phone (LoginScreen.m), the lower-case hex SHA-1 of the typed password
/// followed by the salt compiled into the app. The server stores
/// Argon2id(this value), so an account logs in with one typed password from
/// the app and from the web client (web/assets/password.js computes the same
/// value), and a door that receives the typed password itself (the
/// Mastodon-compatible API's password grant) derives it here.
public enum AppPassword {
    /// The app's `kSalt`, declared once (Tests/EndToEnd/e2e.py keeps the app's copy).
    static let salt = Array("adlfu3489tyh2jnkLIUGI&%EV(&0982cbgrykxjnk8855".utf8)

    /// The value the app sends for `typed`: 40 lower-case hex digits.
    public static func derived(fromTyped typed: [UInt8]) -> [UInt8] {
        Digest.sha1.hex(typed + salt)
    }

    /// Whether `value` looks like an app's value (40 hex digits, either
    /// case): sent where the typed password is asked for, it is the app's
    /// value itself, never a typed password to upgrade from.
    static func hasTheShape(_ value: [UInt8]) -> Bool {
        value.count == 40 && value.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }
    }

    /// Whether `sent` is the app's value of `typed` (compared as the stored
    /// hashes compare: hex in either case).
    static func isDerived(_ sent: [UInt8], fromTyped typed: [UInt8]) -> Bool {
        PasswordHasher.constantTimeEqual(PasswordHasher.normalized(sent), derived(fromTyped: typed))
    }
}
