/// `register`: adds an account (the password hashed once `login.pass` can
/// hold hashes) and signs it in, as the original's register-then-login did.
/// Registrations are counted per network (`RegistrationThrottle`), and a
/// taken name is refused before any hash is computed.
public struct RegisterCommand: Command {
    public let descriptor = CommandDescriptor(
        "register", "Create an account and log it in.", parameters: Credentials.forRegister, checksAPassword: true,
        failures: [.other, .rateLimited], result: .signedIn)

    public enum Failure: APIFailure {
        case usernameExists
        case registrationFailed
        case invalidUsername
        case tooManyRegistrations(seconds: Int64)
        case usernameNotUTF8
        case usernameSpaceAtAnEnd
        case usernameLooksTaken
        case usernameHoldsAtSign

        public var message: String {
            switch self {
            case .usernameExists: "Username already exists"
            case .registrationFailed: "Registration failed"
            case .invalidUsername: "Usernames cannot contain control or invisible characters"
            case .tooManyRegistrations(let seconds): "Too many registrations, try again in \(seconds) seconds"
            case .usernameNotUTF8: "Usernames must be UTF-8 text"
            case .usernameSpaceAtAnEnd: "Usernames cannot begin or end with a space"
            case .usernameLooksTaken: "Username is too similar to an existing one"
            case .usernameHoldsAtSign: "Usernames cannot contain @"
            }
        }

        /// A client backs off on the code (JSON-RPC's -32004), as for a blocked login.
        public var kind: FailureKind {
            if case .tooManyRegistrations = self { return .rateLimited }
            return .other
        }
    }

    /// The original `login` columns are varchar(45).
    public static let maxUsernameBytes = 45
    /// What fits the original `pass varchar(45)` stored as sent.
    public static let maxPasswordBytes = 45
    /// Once passwords are hashed, the input length no longer depends on the column.
    public static let maxHashedPasswordBytes = 256

    private let users: any UserStore
    private let hasher: PasswordHasher
    private let throttle: RegistrationThrottle
    private let login: LoginCommand

    public init(_ services: AppServices, login: LoginCommand) {
        users = services.users
        hasher = services.hasher
        throttle = RegistrationThrottle(counters: services.counters, threshold: services.policy.registrationLimit)
        self.login = login
    }

    public func run(_ input: Credentials, in context: CommandContext) throws -> SignedIn {
        // First, before the look-alike check reads every name: an address
        // that registers too much is slowed, whatever it sends.
        if let wait = try throttle.wait(address: context.clientAddress) {
            SecurityLog.registrationThrottled(seconds: wait, address: context.clientAddress)
            throw Failure.tooManyRegistrations(seconds: wait)
        }
        try throttle.attempted(address: context.clientAddress)
        let input = try withNewUsername(input)
        let hashing = try users.storesPasswordHashes()
        // The original let MySQL truncate the name, which then could not log
        // in. Refuse instead.
        guard input.username.count <= Self.maxUsernameBytes,
              input.password.count <= (hashing ? Self.maxHashedPasswordBytes : Self.maxPasswordBytes) else {
            throw Failure.registrationFailed
        }
        // A taken name costs no hash (the store checks again under its lock).
        guard try users.accounts(named: input.username).isEmpty else { throw Failure.usernameExists }
        var outcome = try users.register(username: input.username, password: hashing ? hasher.hash(input.password) : input.password)
        if case .passwordDoesNotFit = outcome, hashing, input.password.count <= Self.maxPasswordBytes,
           !(try users.storesPasswordHashes()) {
            // `pass` was narrowed since we looked (migration 001 undone
            // while we serve; the store has looked again): stored as sent,
            // as the narrow column takes it.
            outcome = try users.register(username: input.username, password: input.password)
        }
        switch outcome {
        case .created(let account):
            try refuseIfALookalikeWasRegisteredFirst(account)
            return try login.signIn(account, in: context)
        case .nameTaken: throw Failure.usernameExists // registered meanwhile
        case .passwordDoesNotFit: throw Failure.registrationFailed // narrowed again, or the value is too long for it
        }
    }

    /// Two look-alike names registered at once each passed `withNewUsername`
    /// (every name is read before the hash, outside any lock): the one
    /// registered later goes again, before it is signed in.
    private func refuseIfALookalikeWasRegisteredFirst(_ account: UserRecord) throws {
        let others = try users.usernames().filter { $0 != account.username }
        guard let other = UsernameRules.lookalike(of: account.username, among: others),
              try users.accounts(named: other).contains(where: { $0.id < account.id }) else { return }
        try users.removeAccount(id: account.id)
        throw Failure.usernameLooksTaken
    }

    /// The credentials with the name as it will be stored (NFC), once it
    /// follows `UsernameRules` and reads differently from every existing
    /// name (its skeleton; every name is read: registrations are rare).
    private func withNewUsername(_ input: Credentials) throws -> Credentials {
        let username: [UInt8]
        do {
            username = try UsernameRules.checked(input.username)
        } catch {
            switch error {
            case .notUTF8: throw Failure.usernameNotUTF8
            case .invisible: throw Failure.invalidUsername
            case .spaceAtAnEnd: throw Failure.usernameSpaceAtAnEnd
            case .atSign: throw Failure.usernameHoldsAtSign
            }
        }
        if let existing = UsernameRules.lookalike(of: username, among: try users.usernames()) {
            // The same name (as the column compares) is the usual answer.
            throw PasswordHasher.normalized(existing) == PasswordHasher.normalized(username)
                ? Failure.usernameExists : Failure.usernameLooksTaken
        }
        return Credentials(username: username, password: input.password)
    }
}
