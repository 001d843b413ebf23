/// How many accounts and photos the installation has: the instance's and
/// NodeInfo's usage figures.
public struct UsageCounts: Sendable, Equatable {
    public var users: Int64
    public var photos: Int64

    public init(users: Int64, photos: Int64) { (self.users, self.photos) = (users, photos) }
}

public protocol UsageStatistics: AnyObject {
    func counts() throws -> UsageCounts
}

/// A worker's copy of the figures, for `maxAgeMillis` on `clock`: clients
/// ask for the instance at every start, and the counts need not be exact.
public final class CachedUsageStatistics: UsageStatistics {
    private let source: any UsageStatistics
    private let clock: any TimeSource
    private let maxAgeMillis: Int64
    private var kept: (counts: UsageCounts, at: Instant)?

    public init(_ source: any UsageStatistics, clock: any TimeSource, maxAgeMillis: Int64 = 600_000) {
        (self.source, self.clock, self.maxAgeMillis) = (source, clock, maxAgeMillis)
    }

    public func counts() throws -> UsageCounts {
        let now = clock.now
        if let kept, now.millis(since: kept.at) < maxAgeMillis { return kept.counts }
        let counts = try source.counts()
        kept = (counts, now)
        return counts
    }
}
