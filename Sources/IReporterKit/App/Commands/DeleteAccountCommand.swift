/// `delete_account`: with the account's `password` typed again, removes
/// everything of the signed-in user (`AccountRemoval`): its photos with
/// every size, its comments and votes, its sessions, its account. The
/// session cookie is expired in the answer.
public struct DeleteAccountCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "delete_account", "Delete your account with its photos, comments and votes; you are logged out.",
        parameters: [PasswordConfirmation.password], checksAPassword: true, failures: [.other, .rateLimited], result: .successful)

    public struct Input: CommandInput {
        public let password: [UInt8]

        public init(from parameters: any RequestParameters) throws {
            password = try PasswordConfirmation.password.text(parameters)
        }
    }

    private let confirmation: PasswordConfirmation
    private let removal: AccountRemoval

    public init(_ services: AppServices) {
        confirmation = PasswordConfirmation(services)
        removal = AccountRemoval(services)
    }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> Successful {
        let account = try confirmation.confirm(input.password, of: user, in: context)
        try removal.remove(account.id)
        Log.info("delete_account: account \(account.id) deleted")
        context.sessionChange = .ended
        return Successful()
    }
}
