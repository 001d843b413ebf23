/// `login`: checks the password (Argon2id, or a legacy value stored as the
/// app sent it, upgraded on the way) and starts a session under a fresh id.
public struct LoginCommand: Command {
    public enum Failure: APIFailure {
        case authorizationFailed
        case tooManyAttempts(seconds: Int64)

        public var message: String {
            switch self {
            case .authorizationFailed: "Authorization failed"
            case .tooManyAttempts(let seconds): "Too many failed logins, try again in \(seconds) seconds"
            }
        }
    }

    private let users: any UserStore
    private let sessions: any SessionStore
    private let hasher: PasswordHasher
    private let throttle: LoginThrottle

    public init(_ services: AppServices) {
        users = services.users
        sessions = services.sessions
        hasher = services.hasher
        throttle = LoginThrottle(counters: services.counters)
    }

    public func run(_ input: Credentials, in context: CommandContext) throws -> SignedIn {
        let account = try users.accountKey(for: input.username)
        if let wait = try throttle.wait(account: account, address: context.clientAddress) {
            throw Failure.tooManyAttempts(seconds: wait)
        }
        guard let user = try authenticate(username: input.username, password: input.password) else {
            try throttle.failed(account: account, address: context.clientAddress)
            throw Failure.authorizationFailed
        }
        try throttle.succeeded(account: account, address: context.clientAddress)
        return try signIn(user, in: context)
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

    /// The account, if the password matches one of the accounts with this
    /// name (compared as the store compares names, as before). A legacy
    /// plain value, or a hash with old parameters, is replaced by a fresh
    /// hash on the way.
    private func authenticate(username: [UInt8], password: [UInt8]) throws -> UserRecord? {
        let candidates = try users.accounts(named: username)
        // Only where real accounts are checked by hash: before the migration a
        // wrong password costs a byte comparison, and so must a missing name.
        if candidates.isEmpty, try users.storesPasswordHashes() { hasher.burnVerificationTime(password) }
        for account in candidates {
            guard case .match(let upgrade) = hasher.verify(password, against: account.password) else { continue }
            if upgrade, try users.storesPasswordHashes() {
                try users.replacePassword(userID: account.id, old: account.password, new: hasher.hash(password))
            }
            return account
        }
        return nil
    }
}
