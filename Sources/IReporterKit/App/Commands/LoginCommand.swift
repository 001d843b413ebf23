/// `login`: checks the password (`PasswordCheck`: Argon2id, or a legacy
/// value stored as the app sent it, upgraded on the way) and starts a
/// session under a fresh id.
public struct LoginCommand: Command {
    public let descriptor = CommandDescriptor(
        "login", "Log in (the session cookie is set).", parameters: Credentials.forLogin, checksAPassword: true,
        failures: [.other, .rateLimited], result: .signedIn)

    public enum Failure: APIFailure {
        case authorizationFailed
        case tooManyAttempts(seconds: Int64)

        public var message: String {
            switch self {
            case .authorizationFailed: "Authorization failed"
            case .tooManyAttempts(let seconds): "Too many failed logins, try again in \(seconds) seconds"
            }
        }

        /// A client backs off on the code (JSON-RPC's -32004), not on the text.
        public var kind: FailureKind {
            switch self {
            case .authorizationFailed: .other
            case .tooManyAttempts: .rateLimited
            }
        }
    }

    private let sessions: any SessionStore
    private let check: PasswordCheck

    public init(_ services: AppServices) {
        sessions = services.sessions
        check = PasswordCheck(services)
    }

    public func run(_ input: Credentials, in context: CommandContext) throws -> SignedIn {
        let user = try check.user(for: input, address: context.clientAddress)
        let signedIn = try signIn(user, in: context)
        // The password changed while it was checked: change_password ended the
        // sessions it found before this one was made, so this one ends here.
        guard try check.stillHolds(input.password, of: user) else {
            if case .started(let id) = context.sessionChange { sessions.destroy(id: id) }
            context.sessionChange = .ended
            throw Failure.authorizationFailed
        }
        return signedIn
    }

    /// Starts `user`'s session under a fresh id (a planted id is never
    /// logged in) and ends the one the request came with. `register` signs
    /// its new account in with it: no second hash, no throttle.
    func signIn(_ user: UserRecord, in context: CommandContext) throws -> SignedIn {
        let session = try sessions.create([("IdUser", .string(Array(String(user.id).utf8)))], user: user.id)
        if let old = context.sessionCookie, SessionID.isWellFormed(old) {
            sessions.destroy(id: String(decoding: old, as: UTF8.self))
        }
        context.sessionChange = .started(id: session.id)
        return SignedIn(user: user)
    }
}
