/// The signed-in user's password, typed again before `change_password` or
/// `delete_account`: checked as `login` checks it (the hasher, its legacy
/// values), and a wrong one counted by the login throttle, so that a
/// session left open is no way around it to guess the password.
struct PasswordConfirmation {
    /// `password`: the app's value (`AppPassword`) of the typed password, as `login` takes it.
    static let password = CommandParameter("password", .text(maxBytes: nil), required: true,
                                           "the account's password (the app's value, as `login` takes it)")

    enum Failure: APIFailure {
        case wrongPassword
        case tooManyAttempts(seconds: Int64)

        var message: String {
            switch self {
            case .wrongPassword: "Wrong password"
            case .tooManyAttempts(let seconds): LoginCommand.Failure.tooManyAttempts(seconds: seconds).message
            }
        }

        var kind: FailureKind {
            switch self {
            case .wrongPassword: .other
            case .tooManyAttempts(let seconds): LoginCommand.Failure.tooManyAttempts(seconds: seconds).kind
            }
        }
    }

    private let users: any UserStore
    private let hasher: PasswordHasher
    private let throttle: LoginThrottle

    init(_ services: AppServices) {
        users = services.users
        hasher = services.hasher
        throttle = LoginThrottle(counters: services.counters)
    }

    /// The account, once `password` (as sent: urldecoded as `login` does)
    /// is its password; "Authorization required" when the account is gone.
    func confirm(_ password: [UInt8], of user: SignedInUser, in context: CommandContext) throws -> UserRecord {
        guard let account = try users.account(id: user.id) else { throw AuthorizationRequired() }
        let key = try users.accountKey(typed: account.username)
        if let wait = try throttle.wait(account: key, address: context.clientAddress) {
            SecurityLog.loginThrottled(username: account.username, seconds: wait, address: context.clientAddress)
            throw Failure.tooManyAttempts(seconds: wait)
        }
        guard case .match = hasher.verify(PHPStrings.urlDecode(password), against: account.password) else {
            try throttle.failed(account: key, address: context.clientAddress)
            SecurityLog.loginFailed(username: account.username, address: context.clientAddress)
            throw Failure.wrongPassword
        }
        try throttle.succeeded(account: key, address: context.clientAddress)
        return account
    }
}
