/// Follow edges in memory, for the App's unit tests; the feed reads the
/// in-memory photos.
public final class InMemoryFollowStore: FollowStore {
    private let users: InMemoryUserStore
    private let photos: InMemoryPhotoStore
    public private(set) var edges: [(id: Int64, follower: Int64, followee: Int64, created: Int64)] = []
    private var nextID: Int64 = 1

    public init(users: InMemoryUserStore, photos: InMemoryPhotoStore) {
        self.users = users
        self.photos = photos
    }

    public func follow(_ followee: Int64, by follower: Int64, created: Int64) throws -> Bool {
        guard users.accounts.contains(where: { $0.id == followee }),
              !edges.contains(where: { $0.follower == follower && $0.followee == followee }) else { return false }
        edges.append((nextID, follower, followee, created))
        nextID += 1
        return true
    }

    public func unfollow(_ followee: Int64, by follower: Int64) throws -> Bool {
        let before = edges.count
        edges.removeAll { $0.follower == follower && $0.followee == followee }
        return edges.count < before
    }

    public func followers(of userID: Int64, page: PageCursor) throws -> [FollowRecord] {
        list(page) { $0.followee == userID ? $0.follower : nil }
    }

    public func following(of userID: Int64, page: PageCursor) throws -> [FollowRecord] {
        list(page) { $0.follower == userID ? $0.followee : nil }
    }

    public func familiarFollowers(of userID: Int64, viewer: Int64, limit: Int) throws -> [FollowRecord] {
        list(PageCursor(count: limit)) { edge in
            edge.follower == viewer && edges.contains { $0.follower == edge.followee && $0.followee == userID } ? edge.followee : nil
        }
    }

    /// The accounts `listed` picks from the edges in the page, newest edge
    /// first; those without an account are not shown.
    private func list(_ page: PageCursor,
                      _ listed: ((id: Int64, follower: Int64, followee: Int64, created: Int64)) -> Int64?) -> [FollowRecord] {
        page.pick(edges.reversed().filter { page.contains($0.id) }.compactMap { edge -> FollowRecord? in
            guard let other = listed(edge), let account = users.accounts.first(where: { $0.id == other }) else { return nil }
            return FollowRecord(id: edge.id, userID: other, username: account.username)
        })
    }

    public func counts(of userID: Int64, viewer: Int64?) throws -> FollowCounts {
        FollowCounts(followers: Int64(edges.count { $0.followee == userID }), following: Int64(edges.count { $0.follower == userID }),
                     followedByViewer: viewer.map { viewer in edges.contains { $0.follower == viewer && $0.followee == userID } })
    }

    public func followingCount(of userID: Int64) throws -> Int64 {
        Int64(edges.count { $0.follower == userID })
    }

    public func isFollowing(_ follower: Int64, _ followee: Int64) throws -> Bool {
        edges.contains { $0.follower == follower && $0.followee == followee }
    }

    public func feed(of userID: Int64, page: PageCursor) throws -> [Int64] {
        let people = Set(edges.filter { $0.follower == userID }.map(\.followee)).union([userID])
        return page.pick(photos.rows.reversed().filter { page.contains($0.id) && people.contains($0.userID) }.map(\.id))
    }

    public func forget(userID: Int64) throws {
        edges.removeAll { $0.follower == userID || $0.followee == userID }
    }
}
