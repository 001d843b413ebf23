/// `change_password`: the signed-in user's current `password`, then
/// `new_password`, both the app's values (`AppPassword`) as `login` and
/// `register` take them; the new one stored as `register` stores it. Every
/// other session of the account ends (a stolen cookie stops working); the
/// one that asked goes on.
public struct ChangePasswordCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "change_password", "Change your password; your other sessions end.",
        parameters: [PasswordConfirmation.password, Input.newPassword], checksAPassword: true, failures: [.other, .rateLimited],
        result: .successful)

    public struct Input: CommandInput {
        static let newPassword = CommandParameter("new_password", .text(maxBytes: nil), required: true,
                                                  "the new password (the app's value, as `register` takes it)")
        public let password: [UInt8]
        public let newPassword: [UInt8]

        public init(from parameters: any RequestParameters) throws {
            password = try PasswordConfirmation.password.text(parameters)
            newPassword = PHPStrings.urlDecode(try Self.newPassword.text(parameters))
        }
    }

    public enum Failure: APIFailure {
        case unusablePassword
        case changedMeanwhile

        public var message: String {
            switch self {
            case .unusablePassword: "The new password cannot be stored"
            case .changedMeanwhile: "The password was changed meanwhile, try again"
            }
        }
    }

    private let users: any UserStore
    private let sessions: any SessionStore
    private let hasher: PasswordHasher
    private let confirmation: PasswordConfirmation

    public init(_ services: AppServices) {
        users = services.users
        sessions = services.sessions
        hasher = services.hasher
        confirmation = PasswordConfirmation(services)
    }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> Successful {
        // register's limits: what the column holds, nothing empty.
        let hashing = try users.storesPasswordHashes()
        guard !input.newPassword.isEmpty, input.newPassword.count <= (hashing ? RegisterCommand.maxHashedPasswordBytes
                                                                              : RegisterCommand.maxPasswordBytes) else {
            throw Failure.unusablePassword
        }
        let account = try confirmation.confirm(input.password, of: user, in: context)
        let stored = hashing ? hasher.hash(input.newPassword) : input.newPassword
        guard try users.replacePassword(userID: account.id, old: account.password, new: stored) else { throw Failure.changedMeanwhile }
        try sessions.endSessions(of: user.id, except: user.session.id)
        return Successful()
    }
}
