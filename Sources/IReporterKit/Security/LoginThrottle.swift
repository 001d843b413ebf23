/// Login throttling with exponential back-off, so that guessing is slow but
/// nobody can lock a user out for long:
/// - a name from one address: from the 5th failure, up to 15 minutes;
/// - one address, any names: from the 20th failure, up to 15 minutes;
/// - one name from any address (a distributed attack): from the 100th
///   failure, at most a minute, so the real user always gets in soon.
/// A successful login clears its name-and-address counter.
public struct LoginThrottle: Sendable {
    let counters: any SharedCounters

    public init(counters: any SharedCounters) { self.counters = counters }

    private func keys(username: [UInt8], address: String) -> [(String, threshold: Int64, maxBlock: Int64)] {
        let name = String(decoding: PasswordHasher.normalized(username), as: UTF8.self)
        return [("login:\(name)\u{0}\(address)", 5, 900), ("login-address:\(address)", 20, 900),
                ("login-name:\(name)", 100, 60)]
    }

    /// Seconds to wait, if this attempt is not allowed now.
    public func wait(username: [UInt8], address: String) -> Int64? {
        keys(username: username, address: address).compactMap { counters.blockedFor($0.0) }.max()
    }

    public func failed(username: [UInt8], address: String) {
        for (key, threshold, maxBlock) in keys(username: username, address: address) {
            counters.recordFailure(key, threshold: threshold, maxBlockSeconds: maxBlock)
        }
    }

    public func succeeded(username: [UInt8], address: String) {
        counters.reset(keys(username: username, address: address)[0].0)
    }
}
