/// Photo rows in memory, for the App's unit tests; ids start at 2 as the
/// original table's AUTO_INCREMENT does.
public final class InMemoryPhotoStore: PhotoStore {
    private let users: InMemoryUserStore
    public private(set) var rows: [(id: Int64, userID: Int64, title: [UInt8])] = []
    /// Rows `setAside` took out.
    public private(set) var removed: [(id: Int64, userID: Int64, title: [UInt8])] = []
    private var nextID: Int64 = 2

    public init(users: InMemoryUserStore) { self.users = users }

    public func newest(limit: Int) throws -> [PhotoRecord] {
        rows.reversed().compactMap(record).prefix(limit).map { $0 }
    }

    public func photo(id: Int64) throws -> PhotoRecord? {
        rows.first { $0.id == id }.flatMap(record)
    }

    /// Joined with the account, as the stream's JOIN does: a row without one is not shown.
    private func record(_ row: (id: Int64, userID: Int64, title: [UInt8])) -> PhotoRecord? {
        guard let user = users.accounts.first(where: { $0.id == row.userID }) else { return nil }
        return PhotoRecord(id: row.id, title: row.title, userID: row.userID, username: user.username)
    }

    public func add(userID: Int64, title: [UInt8], publish: (Int64) throws -> Void,
                    unpublish: (Int64) -> Void) throws -> Int64 {
        let id = nextID
        nextID += 1
        try publish(id)
        rows.append((id, userID, title))
        return id
    }

    public func ids(after id: Int64, limit: Int) throws -> [Int64] {
        Array(rows.map(\.id).filter { $0 > id }.sorted().prefix(limit))
    }

    public func existing(_ ids: [Int64]) throws -> Set<Int64> { Set(rows.map(\.id)).intersection(ids) }

    public func setAside(id: Int64, reason: String) throws {
        removed += rows.filter { $0.id == id }
        rows.removeAll { $0.id == id }
    }
}
