#if canImport(Glibc)
import Glibc
#endif

/// What a command knows of the request besides its parameters, and what it
/// leaves for the router to do when answering.
public final class CommandContext {
    /// The `PHPSESSID` cookie's value, if any (not yet validated).
    public let sessionCookie: [UInt8]?
    /// The request came over HTTPS (the session cookie then gets `Secure`).
    public let isSecure: Bool
    /// The client's address as the web server saw it (throttling).
    public let clientAddress: String
    /// A browser said the request comes from another web site (`Origin`,
    /// `Sec-Fetch-Site`): only commands that change nothing may run.
    public let isCrossOrigin: Bool

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
    /// The session's user once looked up (nil inside: no one signed in).
    private var loadedUser: SignedInUser??

    public init(sessionCookie: [UInt8]? = nil, isSecure: Bool = false, clientAddress: String = "-", isCrossOrigin: Bool = false) {
        self.sessionCookie = sessionCookie
        self.isSecure = isSecure
        self.clientAddress = clientAddress
        self.isCrossOrigin = isCrossOrigin
    }

    public enum SessionChange: Equatable {
        case started(id: String)
        case ended
    }

    /// The user of the request's session, if it is logged in: the session
    /// is read at most once per request, whoever asks (the login check, a
    /// `myvote`, the replica reads' scope).
    func signedInUser(in sessions: any SessionStore) throws -> SignedInUser? {
        if let loadedUser { return loadedUser }
        let user = try SignedInUser.load(sessionCookie, in: sessions)
        loadedUser = .some(user)
        return user
    }

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
