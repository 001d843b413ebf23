/// The figures by listing every account and photo: for the in-memory
/// stores of the unit tests (the server counts in MariaDB).
public final class InMemoryUsageStatistics: UsageStatistics {
    let users: any UserStore
    let photos: any PhotoStore

    public init(users: any UserStore, photos: any PhotoStore) { (self.users, self.photos) = (users, photos) }

    public func counts() throws -> UsageCounts {
        UsageCounts(users: Int64(try users.usernames().count), photos: Int64(try photos.newest(limit: Int.max).count))
    }
}
