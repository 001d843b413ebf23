/// An account as the `login` table holds it.
public struct UserRecord: Sendable, Equatable {
    public var id: Int64
    /// The name as stored (the app shows it; it may differ from what was typed in case or trailing spaces).
    public var username: [UInt8]
    /// The password as stored: an Argon2id PHC string, or the value the app sent (before the migration).
    public var password: [UInt8]

    public init(id: Int64, username: [UInt8], password: [UInt8]) {
        self.id = id
        self.username = username
        self.password = password
    }
}

/// What `register` did.
public enum RegistrationOutcome: Sendable, Equatable {
    case created(UserRecord)
    /// An account with this name (as the store compares names) exists.
    case nameTaken
    /// The password value does not fit where passwords are stored (now).
    case passwordDoesNotFit
}

/// The accounts. Names are compared as the original's `login.username`
/// column compares them (latin1_swedish_ci: case and trailing spaces ignored).
public protocol UserStore: AnyObject {
    /// Whether passwords are stored as hashes (the column is wide enough);
    /// before `migrate-passwords` they are stored as the app sends them.
    func storesPasswordHashes() throws -> Bool
    /// The accounts with this name, in the order the original's `LIMIT 1` saw them.
    func accounts(named username: [UInt8]) throws -> [UserRecord]
    /// The name as the store compares names: two names have the same key
    /// exactly when they find the same accounts (the throttles count by it).
    func accountKey(for username: [UInt8]) throws -> [UInt8]
    /// Every account's name (`register` compares their look-alike skeletons).
    func usernames() throws -> [[UInt8]]
    /// Adds an account unless the name is taken (atomically, across every server on the store).
    func register(username: [UInt8], password: [UInt8]) throws -> RegistrationOutcome
    /// Replaces a stored password, unless it changed meanwhile or does not fit; true when replaced.
    @discardableResult
    func replacePassword(userID: Int64, old: [UInt8], new: [UInt8]) throws -> Bool
    /// The account with this id, nil when there is none.
    func account(id: Int64) throws -> UserRecord?
    /// Removes the account's row (`delete_account`'s last step).
    func removeAccount(id: Int64) throws
}

extension UserStore {
    /// The accounts a name typed at login means: as sent, then in the
    /// composed form (NFC) that `register` stores, so that a keyboard
    /// sending decomposed letters (`o` and U+0308 for `ö`, Hangul as jamo)
    /// finds the account it registered. The second read only for such a name.
    public func accounts(typed name: [UInt8]) throws -> [UserRecord] {
        let found = try accounts(named: name)
        let composed = UsernameRules.composed(name)
        guard composed != name else { return found }
        return found + (try accounts(named: composed)).filter { other in !found.contains { $0.id == other.id } }
    }

    /// The throttles' key for a name typed at login: every spelling that
    /// finds the same accounts (decomposed or not, any case) is one account
    /// to them, so no spelling adds guesses.
    public func accountKey(typed name: [UInt8]) throws -> [UInt8] {
        try accountKey(for: UsernameRules.composed(name))
    }
}
