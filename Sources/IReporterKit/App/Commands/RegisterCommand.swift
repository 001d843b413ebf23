/// `register`: adds an account (the password hashed once `login.pass` can
/// hold hashes), then logs it in as `login` does.
public struct RegisterCommand: Command {
    public enum Failure: APIFailure {
        case usernameExists
        case registrationFailed
        case invalidUsername

        public var message: String {
            switch self {
            case .usernameExists: "Username already exists"
            case .registrationFailed: "Registration failed"
            case .invalidUsername: "Usernames cannot contain control characters"
            }
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
    private let login: LoginCommand

    public init(_ services: AppServices, login: LoginCommand) {
        users = services.users
        hasher = services.hasher
        self.login = login
    }

    public func run(_ input: Credentials, in context: CommandContext) throws -> SignedIn {
        if input.username.contains(where: TextRules.isControl) { throw Failure.invalidUsername }
        let hashing = try users.storesPasswordHashes()
        // The original let MySQL truncate the name, which then could not log
        // in. Refuse instead.
        guard input.username.count <= Self.maxUsernameBytes,
              input.password.count <= (hashing ? Self.maxHashedPasswordBytes : Self.maxPasswordBytes) else {
            throw Failure.registrationFailed
        }
        let stored = hashing ? hasher.hash(input.password) : input.password
        switch try users.register(username: input.username, password: stored) {
        case .created: return try login.run(input, in: context)
        case .nameTaken: throw Failure.usernameExists
        case .passwordDoesNotFit: throw Failure.registrationFailed // narrowed since we looked
        }
    }
}
