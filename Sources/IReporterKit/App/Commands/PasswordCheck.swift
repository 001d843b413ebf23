/// `login`'s password check with its throttle, for every door that takes a
/// password: the `login` command, and OAuth's password grant (which starts
/// no session). One check, so a guesser gets the same blocks whichever door
/// it knocks on. The password is the app's value (`AppPassword`) from every
/// client; the web client's accounts from before it sent that value log in
/// once with the typed password beside it (`legacy_password`) and are upgraded.
struct PasswordCheck {
    private let users: any UserStore
    private let hasher: PasswordHasher
    private let throttle: LoginThrottle

    init(_ services: AppServices) {
        users = services.users
        hasher = services.hasher
        throttle = LoginThrottle(counters: services.counters)
    }

    /// The account `input` names, if its password matches and the throttle
    /// allows the try; else `LoginCommand.Failure`.
    func user(for input: Credentials, address: String) throws -> UserRecord {
        let account = try users.accountKey(typed: input.username)
        if let typed = input.legacyPassword, AppPassword.isDerived(input.password, fromTyped: typed) {
            return try userWithTypedPassword(PHPStrings.urlDecode(typed), input, account: account, address: address)
        }
        if let wait = try throttle.wait(account: account, address: address) {
            SecurityLog.loginThrottled(username: input.username, seconds: wait, address: address)
            throw LoginCommand.Failure.tooManyAttempts(seconds: wait)
        }
        let candidates = try users.accounts(typed: input.username)
        guard let user = try authenticate(candidates, password: input.password) else {
            try throttle.failed(account: account, address: address)
            try throttle.expectRetry(account: account, address: address, attempt: Self.retryTag(candidates, input.password))
            SecurityLog.loginFailed(username: input.username, address: address)
            throw LoginCommand.Failure.authorizationFailed
        }
        try throttle.succeeded(account: account, address: address)
        return user
    }

    /// The web client's second try of one typed attempt (`legacy_password`,
    /// checked to be the typed password of `input.password`): an account it
    /// made before issue 24 holds Argon2id(typed); on a match the stored hash
    /// becomes Argon2id(the app's value), and from then on the app's value
    /// alone logs in, from any client. When the first try (the app's value
    /// alone) was counted a moment ago, this one is its other half: neither
    /// throttled nor counted again, and the app's value is not hashed twice.
    /// Otherwise it is an attempt of its own, both forms checked, one failure.
    private func userWithTypedPassword(_ typed: [UInt8], _ input: Credentials, account: [UInt8],
                                       address: String) throws -> UserRecord {
        let candidates = try users.accounts(typed: input.username)
        let secondHalf = try throttle.takeRetry(account: account, address: address,
                                                attempt: Self.retryTag(candidates, input.password))
        if !secondHalf, let wait = try throttle.wait(account: account, address: address) {
            SecurityLog.loginThrottled(username: input.username, seconds: wait, address: address)
            throw LoginCommand.Failure.tooManyAttempts(seconds: wait)
        }
        // A "typed" password shaped like the app's value is that value, sent
        // where the typed one is asked for (a Mastodon app's password grant):
        // it matches an account made with it, which must keep it (upgraded
        // to the value of the value, the account's own apps would be locked out).
        let user = try (secondHalf ? nil : authenticate(candidates, password: input.password))
            ?? authenticate(candidates, password: typed, upgradingTo: AppPassword.hasTheShape(typed) ? nil : input.password)
        guard let user else {
            // The second half of one typed attempt: its first half was logged.
            if !secondHalf {
                try throttle.failed(account: account, address: address)
                SecurityLog.loginFailed(username: input.username, address: address)
            }
            throw LoginCommand.Failure.authorizationFailed
        }
        try throttle.succeeded(account: account, address: address)
        return user
    }

    /// Whether `user`'s stored password is still the one `user(for:)`
    /// matched, or, changed meanwhile (a login's upgrade of the same
    /// password), still `password`'s: false once it was changed to another
    /// (`change_password`) or the account is gone. A hash is computed only
    /// when the stored value changed.
    func stillHolds(_ password: [UInt8], of user: UserRecord) throws -> Bool {
        guard let stored = try users.account(id: user.id) else { return false }
        if stored.password == user.password { return true }
        guard case .match = hasher.verify(password, against: stored.password) else { return false }
        return true
    }

    /// Names the value a failed login tried, for its retry's mark: a SHA-256
    /// of the accounts' stored hashes (whose random salts no guesser knows,
    /// so no other guess gives the same tag) and the value, cut to 64 bits.
    /// What reaches the counters (Redis) is no cheap hash of a password.
    static func retryTag(_ candidates: [UserRecord], _ password: [UInt8]) -> String {
        let material = candidates.flatMap { $0.password + [0] } + [0] + PasswordHasher.normalized(password)
        return String(Digest.sha256.hexString(material).prefix(16))
    }

    /// The account, if the password matches one of the accounts with this
    /// name (compared as the store compares names, as before). A legacy
    /// plain value, or a hash with old parameters, is replaced by a fresh
    /// hash on the way; with `upgradingTo`, the stored value is replaced by
    /// (the hash of) that value instead, whatever it was.
    private func authenticate(_ candidates: [UserRecord], password: [UInt8], upgradingTo replacement: [UInt8]? = nil) throws -> UserRecord? {
        // Only where real accounts are checked by hash: before the migration a
        // wrong password costs a byte comparison, and so must a missing name.
        if candidates.isEmpty, try users.storesPasswordHashes() { hasher.burnVerificationTime(password) }
        for account in candidates {
            guard case .match(let upgrade) = hasher.verify(password, against: account.password) else { continue }
            let hashing = try users.storesPasswordHashes()
            if let replacement {
                // Compare-and-replace, as migrate-passwords does: a row changed meanwhile stays.
                if try users.replacePassword(userID: account.id, old: account.password,
                                             new: hashing ? hasher.hash(replacement) : PasswordHasher.normalized(replacement)) {
                    // The operator's measure of when legacy_password can go (docs/COMPATIBILITY.md).
                    Log.info("login: account \(account.id) now holds the app's value (was the web client's typed password)")
                }
            } else if upgrade, hashing {
                try users.replacePassword(userID: account.id, old: account.password, new: hasher.hash(password))
            }
            return account
        }
        return nil
    }
}
