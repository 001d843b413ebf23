/// Counted by MariaDB (`COUNT(*)` reads a whole index: the instance
/// endpoints keep the figures a while, `CachedUsageStatistics`).
public final class MariaDBUsageStatistics: UsageStatistics {
    let database: any DatabaseReading

    public init(database: any DatabaseReading) { self.database = database }

    public func counts() throws -> UsageCounts {
        let row = try database.query("SELECT (SELECT COUNT(*) FROM login) AS users, (SELECT COUNT(*) FROM photos) AS photos", []).first
        return UsageCounts(users: row?.int64("users") ?? 0, photos: row?.int64("photos") ?? 0)
    }
}
