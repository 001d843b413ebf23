/// Registrations counted per network (`ClientNetwork`) the way
/// `LoginThrottle` counts failed logins: past `registration_limit` (100) in
/// an hour, 1 s doubling up to 15 minutes. A registration costs a password
/// hash and leaves an account behind; the people behind one busy NAT
/// register far fewer than that.
public struct RegistrationThrottle: Sendable {
    static let maxBlockSeconds: Int64 = 900

    let counters: any SharedCounters
    let threshold: Int64

    public init(counters: any SharedCounters, threshold: Int) {
        self.counters = counters
        self.threshold = Int64(threshold)
    }

    private func key(_ address: String) -> String { "register-network:\(ClientNetwork(address: address))" }

    /// Seconds to wait (rounded up), if a registration from `address` is not allowed now.
    public func wait(address: String) throws -> Int64? { try counters.blockedMillis(key(address)).map(wholeSecondsRoundedUp) }

    public func attempted(address: String) throws {
        try counters.recordFailure(key(address), threshold: threshold, maxBlockSeconds: Self.maxBlockSeconds)
    }
}
