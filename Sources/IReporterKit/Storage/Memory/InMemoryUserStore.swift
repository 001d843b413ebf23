#if canImport(Glibc)
import Glibc
#endif

/// Accounts in memory, for the App's unit tests. Names compare as the
/// `login` table's latin1_swedish_ci column compares them (`Latin1SwedishCollation`):
/// case, accents and trailing spaces ignored.
public final class InMemoryUserStore: UserStore {
    public private(set) var accounts: [UserRecord] = []
    /// Whether passwords are stored hashed (false: the original's narrow column).
    public var hashesPasswords: Bool
    /// The longest password value that fits (the original column: 45).
    public var passwordCapacity: Int
    /// When each account registered (`login_registered`).
    public private(set) var registered: [Int64: Int64] = [:]

    public init(hashesPasswords: Bool = true) {
        self.hashesPasswords = hashesPasswords
        passwordCapacity = hashesPasswords ? MariaDBUserStore.hashColumnLength : 45
    }

    /// A store holding alice (IdUser 1): a photo needs its account.
    public static func withAlice() -> InMemoryUserStore {
        let users = InMemoryUserStore(hashesPasswords: false)
        _ = try? users.register(username: Array("alice".utf8), password: Array("p".utf8))
        return users
    }

    public func storesPasswordHashes() throws -> Bool { hashesPasswords }

    public func accounts(named username: [UInt8]) throws -> [UserRecord] {
        let key = Latin1SwedishCollation.weights(of: username)
        return accounts.filter { Latin1SwedishCollation.weights(of: $0.username) == key }
    }

    public func accountKey(for username: [UInt8]) throws -> [UInt8] { Latin1SwedishCollation.weights(of: username) }
    public func usernames() throws -> [[UInt8]] { accounts.map(\.username) }

    public func register(username: [UInt8], password: [UInt8]) throws -> RegistrationOutcome {
        if try !accounts(named: username).isEmpty { return .nameTaken }
        guard password.count <= passwordCapacity else { return .passwordDoesNotFit }
        let account = UserRecord(id: (accounts.map(\.id).max() ?? 0) + 1, username: username, password: password)
        accounts.append(account)
        registered[account.id] = Int64(time(nil))
        return .created(account)
    }

    @discardableResult
    public func replacePassword(userID: Int64, old: [UInt8], new: [UInt8]) throws -> Bool {
        guard let index = accounts.firstIndex(where: { $0.id == userID && $0.password == old }),
              new.count <= passwordCapacity else { return false }
        accounts[index].password = new
        return true
    }

    public func account(id: Int64) throws -> UserRecord? { accounts.first { $0.id == id } }

    public func removeAccount(id: Int64) throws {
        accounts.removeAll { $0.id == id }
        registered[id] = nil
    }
}
