/// Login throttling with exponential back-off. Each counter answers one
/// kind of attack and blocks only what that attack looks like, so people
/// sharing an address (carrier NAT, an office) are not locked out by one
/// guesser or by each other's typos:
/// - one account from one network (guessing its password): from the 5th
///   failure, 1 s doubling up to 15 minutes; the account's own successful
///   login there clears it;
/// - one network, many accounts (credential stuffing): from the 20th account
///   that failed there and has not logged in there since, up to 15 minutes.
///   A typo followed by the right password is taken back, so a busy NAT's
///   honest mistakes do not add up;
/// - one account from any network (a distributed guesser): from the 100th
///   failure, at most a minute at a time, so the real user gets in soon.
/// Every counter forgets its threshold's worth of attempts an hour, so only
/// a rate above it is ever blocked. Accounts are keyed as the user store
/// matches names (`UserStore.accountKey`): every spelling that logs into an
/// account counts against the same counters. Networks: `ClientNetwork`.
public struct LoginThrottle: Sendable {
    struct Rule {
        let threshold: Int64
        let maxBlockSeconds: Int64
    }

    static let accountFromNetwork = Rule(threshold: 5, maxBlockSeconds: 900)
    static let network = Rule(threshold: 20, maxBlockSeconds: 900)
    static let account = Rule(threshold: 100, maxBlockSeconds: 60)

    let counters: any SharedCounters

    public init(counters: any SharedCounters) { self.counters = counters }

    private struct Keys {
        let accountFromNetwork: String
        let network: String
        let account: String

        init(account: [UInt8], address: String) {
            let accountHex = account.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            let network = ClientNetwork(address: address)
            accountFromNetwork = "login:\(accountHex)@\(network)"
            self.network = "login-network:\(network)"
            self.account = "login-account:\(accountHex)"
        }
    }

    /// Seconds to wait (rounded up: never 0 while blocked), if this attempt
    /// is not allowed now. A block lasts what it says, to the millisecond of
    /// the counters' clock.
    public func wait(account: [UInt8], address: String) throws -> Int64? {
        let keys = Keys(account: account, address: address)
        let now = counters.clock.now
        let millis = try [keys.accountFromNetwork, keys.network, keys.account].compactMap { try counters.blockedMillis($0, at: now) }.max()
        return millis.map(wholeSecondsRoundedUp)
    }

    public func failed(account: [UInt8], address: String) throws {
        let keys = Keys(account: account, address: address)
        // The network counts accounts, not failures: only an account's first failure there.
        if try record(keys.accountFromNetwork, Self.accountFromNetwork) == 1 { try record(keys.network, Self.network) }
        try record(keys.account, Self.account)
    }

    /// After a failed login with the app's value: the web client may send
    /// the same attempt once more with the typed password (`legacy_password`,
    /// for accounts it made before issue 24), and that second half of one
    /// typed attempt must not count as a second failure. The mark is keyed
    /// by `attempt`, a tag of the value tried that a guesser cannot match with
    /// another guess (`PasswordCheck.retryTag`), and never blocks (an entry the
    /// table may evict: the retry would then count, never the other way).
    public func expectRetry(account: [UInt8], address: String, attempt: String) throws {
        try counters.recordFailure(retryKey(account, address, attempt), threshold: 1 << 40, maxBlockSeconds: 0)
    }

    /// Whether this retry's first half was counted (and so was let in): the
    /// mark is used up, a second retry counts.
    public func takeRetry(account: [UInt8], address: String, attempt: String) throws -> Bool {
        try counters.reset(retryKey(account, address, attempt)) > 0
    }

    private func retryKey(_ account: [UInt8], _ address: String, _ attempt: String) -> String {
        "login-retry:\(Keys(account: account, address: address).accountFromNetwork.dropFirst(6)):\(attempt)"
    }

    public func succeeded(account: [UInt8], address: String) throws {
        let keys = Keys(account: account, address: address)
        if try counters.reset(keys.accountFromNetwork) > 0 { try counters.forgive(keys.network) }
    }

    @discardableResult
    private func record(_ key: String, _ rule: Rule) throws -> Int64 {
        try counters.recordFailure(key, threshold: rule.threshold, maxBlockSeconds: rule.maxBlockSeconds)
    }
}
