/// A failure a command reports to the client as `{"error":"…"}`: each
/// command declares its own, with the text the app shows. Any other error
/// thrown by a command is an infrastructure failure (the database or disk),
/// logged and answered as "temporarily unavailable".
public protocol APIFailure: Error {
    var message: String { get }
    /// What kind of failure it is (the JSON-RPC error code); `.other` unless a type says.
    var kind: FailureKind { get }
}

extension APIFailure {
    public var kind: FailureKind { .other }

    /// The access log's `outcome=`: the failure's case or type name in
    /// lower case with dashes (`authorization-failed`, `too-many-attempts`,
    /// `service-unavailable`), whatever it carries.
    public var outcome: String { outcomeName(String(describing: self)) }
}

/// `tooManyAttempts(seconds: 4)` → `too-many-attempts`: a case or type
/// name as the access log writes it (letters and digits, dashes between words).
func outcomeName(_ described: String) -> String {
    var name = ""
    for character in described.prefix(while: { $0 != "(" }).suffix(60) {
        if character.isUppercase, !name.isEmpty { name += "-" }
        if character.isASCII, character.isLetter || character.isNumber { name += character.lowercased() }
    }
    return name.isEmpty ? "failed" : name
}

/// The original's answer to a command that needs a login, when there is
/// none: the app shows its login screen on this exact text.
public struct AuthorizationRequired: APIFailure {
    public var message: String { "Authorization required" }
}

/// A state-changing command sent by a browser from another web site
/// (cross-site request forgery): refused before it runs.
public struct CrossOriginRefused: APIFailure {
    public var message: String { "Requests from other web sites are not allowed" }
}

/// Text the database refused for its characters: with `db_charset` other
/// than latin1, MariaDB converts text into the latin1 columns, and in
/// strict mode refuses what latin1 has not (emoji, most scripts). Not a
/// failure to try again.
public struct TextNotStorable: APIFailure {
    public var message: String { "The text has characters this server cannot store" }
    public var kind: FailureKind { .invalidParameters }
}

/// What the client is told when the database or the disk failed.
public struct ServiceUnavailable: APIFailure {
    public var message: String { "The service is temporarily unavailable, please try again" }
}

/// A store's error that may mean the store is unreachable (then the client
/// is told to try again) rather than that the request itself failed.
public protocol StoreError: Error {
    var isUnavailable: Bool { get }
    /// The store's table is not there: its migration is not applied yet.
    var isMissingTable: Bool { get }
}

extension DatabaseError: StoreError {
    /// Unreachable, or busy for a moment (on a Galera cluster around a
    /// node's departure): "try again", not the original's "broken".
    public var isUnavailable: Bool { isConnectionLost || isTransient }
    public var isMissingTable: Bool { code == .noSuchTable }
}

extension S3Error: StoreError {
    public var isUnavailable: Bool { unreachable }
    public var isMissingTable: Bool { false }
}
