/// `username` and `password`, as login and register take them. The
/// original ran every SQL argument through urldecode() once more; an account
/// it created is only found with the same decoding.
///
/// `password` is the app's value (`AppPassword`), from every client.
/// `legacy_password` (login only; web client before issue 24): the typed
/// password itself, sent once more by the web client after its login with
/// the app's value failed, for the accounts that client made while it sent
/// the typed password (stored as Argon2id of that).
public struct Credentials: CommandInput {
    static let username = CommandParameter("username", .text(maxBytes: nil), required: true, "the account's name")
    static let password = CommandParameter("password", .text(maxBytes: nil), required: true,
                                           "the app's value of the typed password (`AppPassword`)")
    static let legacyPassword = CommandParameter("legacy_password", .text(maxBytes: nil),
                                                 "the typed password, sent once more by the web client for its older accounts")
    static let forRegister = [username, password]
    static let forLogin = [username, password, legacyPassword]

    public let username: [UInt8]
    public let password: [UInt8]
    /// As sent (the app's value is computed from it undecoded); nil when absent.
    public let legacyPassword: [UInt8]?

    public init(from parameters: any RequestParameters) throws {
        username = PHPStrings.urlDecode(try Self.username.text(parameters))
        password = PHPStrings.urlDecode(try Self.password.text(parameters))
        // An empty one is sent: the form keeps it apart from none.
        legacyPassword = parameters.field(Self.legacyPassword.name)
    }

    init(username: [UInt8], password: [UInt8], legacyPassword: [UInt8]? = nil) {
        self.username = username
        self.password = password
        self.legacyPassword = legacyPassword
    }
}
