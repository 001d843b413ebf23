/// Registrations counted per network (`ClientNetwork`) the way
/// `LoginThrottle` counts failed logins: from the 100th in an hour, 1 s
/// doubling up to 15 minutes. A registration costs a password hash and
/// leaves an account behind; the people behind one busy NAT register far
/// fewer than that.
public struct RegistrationThrottle: Sendable {
    static let rule = LoginThrottle.Rule(threshold: 100, maxBlockSeconds: 900)

    let counters: any SharedCounters

    public init(counters: any SharedCounters) { self.counters = counters }

    private func key(_ address: String) -> String { "register-network:\(ClientNetwork(address: address))" }

    /// Seconds to wait (rounded up), if a registration from `address` is not allowed now.
    public func wait(address: String) throws -> Int64? { try counters.blockedMillis(key(address)).map(wholeSecondsRoundedUp) }

    public func attempted(address: String) throws {
        try counters.recordFailure(key(address), threshold: Self.rule.threshold, maxBlockSeconds: Self.rule.maxBlockSeconds)
    }
}
