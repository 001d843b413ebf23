/// Photo rows in memory, with their details, votes and comments, for the
/// App's unit tests; ids start at 2 as the original table's AUTO_INCREMENT
/// does. Counts are computed from the votes and comments (the MariaDB store
/// keeps them in `photo_counts`).
public final class InMemoryPhotoStore: PhotoStore, VoteStore, CommentStore {
    private let users: InMemoryUserStore
    public private(set) var rows: [(id: Int64, userID: Int64, title: [UInt8])] = []
    public private(set) var details: [Int64: PhotoDetails] = [:]
    public private(set) var photoSecrets: [Int64: PhotoSecret] = [:]
    public private(set) var votes: [VoteKey: Vote] = [:]
    public private(set) var commentRows: [(id: Int64, photoID: Int64, userID: Int64, text: [UInt8], created: Int64)] = []
    /// Rows `setAside` took out.
    public private(set) var removed: [(id: Int64, userID: Int64, title: [UInt8])] = []
    private var nextID: Int64 = 2
    private var nextCommentID: Int64 = 1

    public struct VoteKey: Hashable, Sendable {
        public let photoID: Int64
        public let userID: Int64
    }

    public init(users: InMemoryUserStore) { self.users = users }

    public func newest(limit: Int) throws -> [PhotoRecord] {
        try photos(in: PageCursor(count: limit), userID: nil)
    }

    public func photo(id: Int64) throws -> PhotoRecord? {
        rows.first { $0.id == id }.flatMap(record)
    }

    public func photos(ids: Set<Int64>) throws -> [Int64: PhotoRecord] {
        Dictionary(uniqueKeysWithValues: rows.filter { ids.contains($0.id) }.compactMap(record).map { ($0.id, $0) })
    }

    /// Joined with the account, as the stream's JOIN does: a row without one is not shown.
    private func record(_ row: (id: Int64, userID: Int64, title: [UInt8])) -> PhotoRecord? {
        guard let user = users.accounts.first(where: { $0.id == row.userID }) else { return nil }
        return PhotoRecord(id: row.id, title: row.title, userID: row.userID, username: user.username)
    }

    public func add(userID: Int64, title: [UInt8], details: PhotoDetails?, secret: PhotoSecret?,
                    publish: (Int64, PhotoSecret?) throws -> Void, unpublish: (Int64) -> Void) throws -> Int64 {
        guard users.accounts.contains(where: { $0.id == userID }) else { throw PhotoStoreError.accountRemoved }
        let id = nextID
        nextID += 1
        try publish(id, secret)
        rows.append((id, userID, title))
        self.details[id] = details
        photoSecrets[id] = secret
        return id
    }

    public func secret(of id: Int64) throws -> PhotoSecret? { photoSecrets[id] }

    public func details(ids: Set<Int64>) throws -> [Int64: PhotoDetails] { details.filter { ids.contains($0.key) } }

    public func person(id: Int64) throws -> PersonRecord? {
        guard let account = users.accounts.first(where: { $0.id == id }) else { return nil }
        let own = rows.filter { $0.userID == id }
        let uploads = own.compactMap { details[$0.id]?.created }
        return PersonRecord(id: id, username: account.username, photoCount: Int64(own.count),
                            firstUpload: uploads.min(), lastUpload: uploads.max(), registered: users.registered[id])
    }

    public func secrets(ids: Set<Int64>) throws -> [Int64: PhotoSecret] {
        for row in rows where ids.contains(row.id) && photoSecrets[row.id] == nil { photoSecrets[row.id] = .random() }
        return photoSecrets.filter { ids.contains($0.key) }
    }

    public func ids(after id: Int64, limit: Int) throws -> [Int64] {
        Array(rows.map(\.id).filter { $0 > id }.sorted().prefix(limit))
    }

    public func photoIDs(ofUser userID: Int64, before: Int64, limit: Int) throws -> [Int64] {
        Array(rows.filter { $0.userID == userID && $0.id < before }.map(\.id).sorted(by: >).prefix(limit))
    }

    public func photos(in page: PageCursor, userID: Int64?) throws -> [PhotoRecord] {
        page.pick(rows.reversed().filter { page.contains($0.id) && (userID == nil || $0.userID == userID) }.compactMap(record))
    }

    public func photosWithExtras(in page: PageCursor, userID: Int64?,
                                 viewer: Int64?) throws -> [(photo: PhotoRecord, extras: PhotoExtras)] {
        try photos(in: page, userID: userID).map { ($0, extras(of: $0.id, viewer: viewer)) }
    }

    public func extras(of ids: [Int64], viewer: Int64?) throws -> [Int64: PhotoExtras] {
        let existing = Set(rows.map(\.id))
        return Dictionary(ids.filter(existing.contains).map { ($0, extras(of: $0, viewer: viewer)) },
                          uniquingKeysWith: { first, _ in first })
    }

    private func extras(of photoID: Int64, viewer: Int64?) -> PhotoExtras {
        let photoVotes = votes.filter { $0.key.photoID == photoID }.values
        return PhotoExtras(likes: Int64(photoVotes.filter { $0 == .like }.count),
                           dislikes: Int64(photoVotes.filter { $0 == .dislike }.count),
                           comments: Int64(commentRows.filter { $0.photoID == photoID }.count),
                           myVote: viewer.flatMap { votes[VoteKey(photoID: photoID, userID: $0)] },
                           details: details[photoID])
    }

    public func deleteOwned(id: Int64, by userID: Int64) throws -> PhotoDeletion {
        guard let row = rows.first(where: { $0.id == id }) else { return .notFound }
        guard row.userID == userID else { return .notOwner }
        rows.removeAll { $0.id == id }
        details[id] = nil
        photoSecrets[id] = nil
        votes = votes.filter { $0.key.photoID != id }
        commentRows.removeAll { $0.photoID == id }
        return .deleted
    }

    public func orphanedReactions(remove: Bool) throws -> Int {
        let ids = Set(rows.map(\.id))
        let accounts = Set(users.accounts.map(\.id))
        let keptDetails = details.filter { ids.contains($0.key) }
        let keptVotes = votes.filter { ids.contains($0.key.photoID) && accounts.contains($0.key.userID) }
        let keptComments = commentRows.filter { ids.contains($0.photoID) && accounts.contains($0.userID) }
        let orphans = details.count + votes.count + commentRows.count - (keptDetails.count + keptVotes.count + keptComments.count)
        if remove { (details, votes, commentRows) = (keptDetails, keptVotes, keptComments) }
        return orphans
    }

    // MARK: - VoteStore

    public func setVote(_ vote: Vote?, photoID: Int64, userID: Int64) throws -> (extras: PhotoExtras, changed: Bool)? {
        guard rows.contains(where: { $0.id == photoID }) else { return nil }
        if vote != nil, !users.accounts.contains(where: { $0.id == userID }) { throw PhotoStoreError.accountRemoved }
        let key = VoteKey(photoID: photoID, userID: userID)
        let changed = votes[key] != vote
        votes[key] = vote
        return (extras(of: photoID, viewer: userID), changed)
    }

    public func likers(of photoID: Int64, page: PageCursor) throws -> [(userID: Int64, username: [UInt8])] {
        page.pick(votes.filter { $0.key.photoID == photoID && $0.value == .like && page.contains($0.key.userID) }.map(\.key.userID)
            .sorted(by: >).compactMap { id in users.accounts.first { $0.id == id }.map { (id, $0.username) } })
    }

    public func votes(by userID: Int64, on photoIDs: [Int64]) throws -> [Int64: Vote] {
        var mine: [Int64: Vote] = [:]
        for id in photoIDs { mine[id] = votes[VoteKey(photoID: id, userID: userID)] }
        return mine
    }

    public func likedPhotoIDs(by userID: Int64, in page: PageCursor) throws -> [Int64] {
        page.pick(rows.reversed().filter { page.contains($0.id) && votes[VoteKey(photoID: $0.id, userID: userID)] == .like }
            .compactMap(record).map(\.id))
    }

    public func votes(byUser userID: Int64, after photoID: Int64, limit: Int) throws -> [(photoID: Int64, vote: Vote)] {
        Array(votes.filter { $0.key.userID == userID && $0.key.photoID > photoID }.map { ($0.key.photoID, $0.value) }
            .sorted { $0.photoID < $1.photoID }.prefix(limit))
    }

    // MARK: - CommentStore

    public func addComment(photoID: Int64, userID: Int64, text: [UInt8], created: Int64) throws -> CommentRecord? {
        guard rows.contains(where: { $0.id == photoID }) else { return nil }
        guard users.accounts.contains(where: { $0.id == userID }) else { throw PhotoStoreError.accountRemoved }
        let id = nextCommentID
        nextCommentID += 1
        commentRows.append((id, photoID, userID, text, created))
        return comment(commentRows[commentRows.count - 1])
    }

    public func comments(photoID: Int64, page: PageCursor) throws -> [CommentRecord] {
        page.pick(commentRows.reversed().filter { $0.photoID == photoID && page.contains($0.id) }.map(comment))
    }

    public func comments(byUser userID: Int64, page: PageCursor) throws -> [CommentRecord] {
        page.pick(commentRows.reversed().filter { $0.userID == userID && page.contains($0.id) }.map(comment))
    }

    public func removeComment(id: Int64, by userID: Int64) throws -> CommentRemoval {
        guard let row = commentRows.first(where: { $0.id == id }) else { return .notFound }
        let photoOwner = rows.first { $0.id == row.photoID }?.userID
        guard row.userID == userID || photoOwner == userID else { return .notAllowed }
        commentRows.removeAll { $0.id == id }
        return .removed
    }

    public func comment(id: Int64) throws -> CommentRecord? {
        commentRows.first { $0.id == id }.map(comment)
    }

    private func comment(_ row: (id: Int64, photoID: Int64, userID: Int64, text: [UInt8], created: Int64)) -> CommentRecord {
        CommentRecord(id: row.id, photoID: row.photoID, userID: row.userID,
                      username: users.accounts.first { $0.id == row.userID }?.username, text: row.text, created: row.created)
    }

    // MARK: - for `ireporter repair`

    public func existing(_ ids: [Int64]) throws -> Set<Int64> { Set(rows.map(\.id)).intersection(ids) }

    public func forgetSetAside(ofUser userID: Int64) throws { removed.removeAll { $0.userID == userID } }

    public func setAside(id: Int64, reason: String) throws {
        removed += rows.filter { $0.id == id }
        rows.removeAll { $0.id == id }
    }
}
