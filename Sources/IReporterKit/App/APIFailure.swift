/// A failure a command reports to the client as `{"error":"…"}`: each
/// command declares its own, with the text the app shows. Any other error
/// thrown by a command is an infrastructure failure (the database or disk),
/// logged and answered as "temporarily unavailable".
public protocol APIFailure: Error {
    var message: String { get }
}

/// The original's answer to a command that needs a login, when there is
/// none: the app shows its login screen on this exact text.
public struct AuthorizationRequired: APIFailure {
    public var message: String { "Authorization required" }
}

/// What the client is told when the database or the disk failed.
public struct ServiceUnavailable: APIFailure {
    public var message: String { "The service is temporarily unavailable, please try again" }
}

/// A store's error that may mean the store is unreachable (then the client
/// is told to try again) rather than that the request itself failed.
public protocol StoreError: Error {
    var isUnavailable: Bool { get }
}

extension DatabaseError: StoreError {
    public var isUnavailable: Bool { isConnectionLost }
}
