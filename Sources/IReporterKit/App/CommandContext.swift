#if canImport(Glibc)
import Glibc
#endif

/// What a command knows of the request besides its parameters, and what it
/// leaves for the router to do when answering.
public final class CommandContext {
    /// The session the request came with, read at most once.
    public let session: RequestSession
    /// The `PHPSESSID` cookie's value, if any (not yet validated).
    public var sessionCookie: [UInt8]? { session.cookie }
    /// The request came over HTTPS (the session cookie then gets `Secure`).
    public let isSecure: Bool
    /// The client's address as the web server saw it (throttling).
    public let clientAddress: String
    /// A browser said the request comes from another web site (`Origin`,
    /// `Sec-Fetch-Site`): only commands that change nothing may run.
    public let isCrossOrigin: Bool
    /// When the request arrived (`RequestArrival`: when nginx sent it, else
    /// its body read), on `AppServices.clock`: what `upload_deadline`
    /// counts from, as the client's and the web server's waiting for the
    /// answer does. Nil: unknown (no deadline).
    public let arrived: Instant?

    /// Set by a command that logs in or out: the answer carries the cookie.
    public var sessionChange: SessionChange?
    /// Time spent in image work (access log).
    public var imageMicros: Int64 = 0
    /// The access log's `outcome`: `ok` or the failure's name (`APIFailure.outcome`), once answered.
    public internal(set) var outcome: String?
    /// The JSON-RPC method the call named (access log), if it named one.
    public internal(set) var method: String?
    /// Temporary files of this request, removed once it is answered.
    private var temporaryFiles: [String] = []

    public convenience init(sessionCookie: [UInt8]? = nil, isSecure: Bool = false, clientAddress: String = "-",
                            isCrossOrigin: Bool = false, arrived: Instant? = nil) {
        self.init(session: RequestSession(cookie: sessionCookie), isSecure: isSecure, clientAddress: clientAddress,
                  isCrossOrigin: isCrossOrigin, arrived: arrived)
    }

    public init(session: RequestSession, isSecure: Bool = false, clientAddress: String = "-", isCrossOrigin: Bool = false,
                arrived: Instant? = nil) {
        self.session = session
        self.isSecure = isSecure
        self.clientAddress = clientAddress
        self.isCrossOrigin = isCrossOrigin
        self.arrived = arrived
    }

    public enum SessionChange: Equatable {
        case started(id: String)
        case ended
    }

    /// The user of the request's session, if it is logged in.
    func signedInUser(in sessions: any SessionStore) throws -> SignedInUser? { try session.user(in: sessions) }

    /// A file to remove when the request is answered.
    func removeWhenAnswered(_ path: String) { temporaryFiles.append(path) }

    /// A temporary file that was moved into place: no longer ours to remove.
    func keep(_ path: String) { temporaryFiles.removeAll { $0 == path } }

    func removeTemporaryFiles() {
        for path in temporaryFiles where unlink(path) != 0 && errno != ENOENT {
            Log.warning("cannot remove \(path) (\(String(cString: strerror(errno)))): the next sweep will")
        }
        temporaryFiles = []
    }
}

/// The session a request came with: its cookie, and its user read at most
/// once per request whoever asks (the login check, a `myvote`, the replica
/// reads' scope in the gateway).
public final class RequestSession {
    /// The `PHPSESSID` cookie's value, if any (not yet validated).
    public let cookie: [UInt8]?
    /// The user once looked up (nil inside: no one signed in).
    private var loaded: SignedInUser??

    public init(cookie: [UInt8]?) { self.cookie = cookie }

    /// A request whose user is known already (an access token's): no cookie.
    init(signedIn user: SignedInUser?) {
        cookie = nil
        loaded = .some(user)
    }

    func user(in sessions: any SessionStore) throws -> SignedInUser? {
        if let loaded { return loaded }
        let user = try SignedInUser.load(cookie, in: sessions)
        loaded = .some(user)
        return user
    }
}
