/// `MediaStore` in memory: the App's unit tests.
public final class InMemoryMediaStore: MediaStore {
    private var media: [Int64: PendingMedia] = [:]
    private var nextID: Int64 = 1
    public private(set) var photoDescriptions: [Int64: [UInt8]] = [:]
    private var posts: [PostKey: (statusID: Int64, created: Int64)] = [:]

    private struct PostKey: Hashable {
        let userID: Int64
        let keyHash: String
    }

    /// A test makes this many of the next removals and descriptions fail,
    /// as a database gone after the photo's COMMIT does.
    public var failingCleanUps = 0

    public init() {}

    public func addPending(_ media: PendingMedia, limit: Int) throws -> Int64? {
        guard try pendingCount(userID: media.userID) < limit else { return nil }
        var media = media
        media.id = nextID
        nextID += 1
        self.media[media.id] = media
        return media.id
    }

    public func pending(id: Int64) throws -> PendingMedia? { media[id] }

    public func pendingCount(userID: Int64) throws -> Int { media.values.count { $0.userID == userID } }

    public func pending(ofUser userID: Int64) throws -> [PendingMedia] {
        media.values.filter { $0.userID == userID }.sorted { $0.id < $1.id }
    }

    public func updatePending(id: Int64, userID: Int64, description: [UInt8]?, focusX: Double?, focusY: Double?) throws {
        guard media[id]?.userID == userID else { return }
        media[id]!.description = description.flatMap { $0.isEmpty ? nil : $0 }
        (media[id]!.focusX, media[id]!.focusY) = (focusX, focusY)
    }

    public func removePending(id: Int64) throws {
        try failIfAsked()
        media[id] = nil
    }

    public func pendingCreated(before time: Int64, limit: Int) throws -> [PendingMedia] {
        Array(media.values.filter { $0.created < time }.sorted { $0.id < $1.id }.prefix(limit))
    }

    public func descriptions(ofPhotos ids: [Int64]) throws -> [Int64: [UInt8]] {
        photoDescriptions.filter { ids.contains($0.key) }
    }

    public func setDescription(_ description: [UInt8]?, ofPhoto id: Int64) throws {
        try failIfAsked()
        photoDescriptions[id] = description.flatMap { $0.isEmpty ? nil : $0 }
    }

    public func claimPost(userID: Int64, keyHash: String, since: Int64, abandonedBefore: Int64, at time: Int64) throws -> PostClaim {
        let key = PostKey(userID: userID, keyHash: keyHash)
        if let kept = posts[key], kept.created >= since, kept.statusID > 0 || kept.created >= abandonedBefore {
            return kept.statusID > 0 ? .posted(kept.statusID) : .underWay
        }
        posts[key] = (0, time)
        return .claimed
    }

    public func releasePost(userID: Int64, keyHash: String) throws {
        let key = PostKey(userID: userID, keyHash: keyHash)
        if posts[key]?.statusID == 0 { posts[key] = nil }
    }

    public func rememberPost(userID: Int64, keyHash: String, statusID: Int64, at time: Int64) throws {
        posts[PostKey(userID: userID, keyHash: keyHash)] = (statusID, time)
    }

    public func forgetPosts(before time: Int64) throws { posts = posts.filter { $0.value.created >= time } }

    public func forgetPosts(ofUser userID: Int64) throws { posts = posts.filter { $0.key.userID != userID } }

    private func failIfAsked() throws(DatabaseError) {
        guard failingCleanUps > 0 else { return }
        failingCleanUps -= 1
        throw DatabaseError(code: .serverGoneAway, message: "MySQL server has gone away")
    }
}
