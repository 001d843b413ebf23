/// A photo as the stream shows it: the `photos` row with its author's name.
public struct PhotoRecord: Sendable, Equatable {
    public var id: Int64
    /// Nil only where a database holds NULL (the original answered `null`).
    public var title: [UInt8]?
    public var userID: Int64
    public var username: [UInt8]?

    public init(id: Int64, title: [UInt8]?, userID: Int64, username: [UInt8]?) {
        self.id = id
        self.title = title
        self.userID = userID
        self.username = username
    }
}

/// An account with what its photos tell of it (`flickr.people.getInfo`).
public struct PersonRecord: Sendable, Equatable {
    public var id: Int64
    public var username: [UInt8]
    public var photoCount: Int64
    /// Unix seconds of the oldest upload whose time was kept (migration 003); nil: none.
    public var firstUpload: Int64?
    /// And of the newest.
    public var lastUpload: Int64?
    /// When it registered (migration 016); nil for the accounts before it.
    public var registered: Int64?

    public init(id: Int64, username: [UInt8], photoCount: Int64, firstUpload: Int64?, lastUpload: Int64? = nil,
                registered: Int64? = nil) {
        (self.id, self.username, self.photoCount, self.firstUpload, self.lastUpload) = (id, username, photoCount, firstUpload, lastUpload)
        self.registered = registered
    }
}

public enum PhotoStoreError: Error, Equatable {
    /// The account was deleted meanwhile: no photo, comment or vote of it is added.
    case accountRemoved
}

/// The photos' rows. The files are not its business (`PhotoFileStore`),
/// except that a photo's row is committed only once its files are in place.
public protocol PhotoStore: AnyObject {
    /// The newest photos first, at most `limit`.
    func newest(limit: Int) throws -> [PhotoRecord]
    func photo(id: Int64) throws -> PhotoRecord?
    /// Those of `ids` that `photo(id:)` finds, by id, in one query.
    func photos(ids: Set<Int64>) throws -> [Int64: PhotoRecord]
    /// Adds a row and runs `publish` with its new id before the row is
    /// committed, so that no committed row lacks its files. When `publish`
    /// throws, nothing is stored and its error is rethrown. When the commit
    /// surely failed, `unpublish` removes the files; when its outcome cannot
    /// be known, the files stay (`ireporter repair` settles it) and the
    /// error is thrown. `details` and `secret` are kept in the row's
    /// transaction (a database without migration 003 or 006 keeps the row
    /// without them); `publish` is given the secret as kept, nil when it was
    /// not, so that no file is named by a secret that no row holds. Throws
    /// `PhotoStoreError.accountRemoved` when `userID`'s account is gone (an
    /// upload that began before its account's deletion ended).
    func add(userID: Int64, title: [UInt8], details: PhotoDetails?, secret: PhotoSecret?,
             publish: (_ id: Int64, _ keptSecret: PhotoSecret?) throws -> Void, unpublish: (Int64) -> Void) throws -> Int64

    /// The photo's secret as stored, nil when it has none (or no row).
    func secret(of id: Int64) throws -> PhotoSecret?
    /// The secrets of those of `ids` that have a row: a photo stored without
    /// one (by the PHP version) is given one now.
    func secrets(ids: Set<Int64>) throws -> [Int64: PhotoSecret]
    /// The details of those of `ids` that have them (migration 003).
    func details(ids: Set<Int64>) throws -> [Int64: PhotoDetails]
    /// The account `id` with its photos' count and first upload; nil: no such account.
    func person(id: Int64) throws -> PersonRecord?

    /// A page of the stream, one person's photos when `userID` is set.
    func photos(in page: PageCursor, userID: Int64?) throws -> [PhotoRecord]
    /// The ids of `userID`'s photos below `before`, newest first, at most
    /// `limit`, from the primary: whether or not the account's row is
    /// still there (the stream shows a photo with its account only).
    func photoIDs(ofUser userID: Int64, before: Int64, limit: Int) throws -> [Int64]
    /// The same, each photo with its counts, details and `viewer`'s vote,
    /// in one query (not one per photo).
    func photosWithExtras(in page: PageCursor, userID: Int64?, viewer: Int64?) throws -> [(photo: PhotoRecord, extras: PhotoExtras)]
    /// The counts, details and `viewer`'s vote of those of `ids` that
    /// exist (photos found otherwise: `search`), in one query per few hundred.
    func extras(of ids: [Int64], viewer: Int64?) throws -> [Int64: PhotoExtras]
    /// Deletes `userID`'s photo with its comments, votes, counts and
    /// details, in one transaction. The files are the caller's to remove
    /// once this returned `.deleted` (a file without a row is debris that
    /// `ireporter repair` clears; a row without its file would be a hole).
    func deleteOwned(id: Int64, by userID: Int64) throws -> PhotoDeletion
    /// The comments, votes, counts and details of photos that no longer
    /// exist (a deletion cut short on the original MyISAM `photos`, which
    /// cannot roll back; a row deleted outside the API), but of those set
    /// aside, and the comments, votes and notifications of accounts that no
    /// longer exist: how many rows, removed when `remove` (their photos'
    /// counts counted again).
    func orphanedReactions(remove: Bool) throws -> Int
    /// Forgets `userID`'s photos set aside (`setAside`) with what their
    /// ids still hold (comments, votes, details, secret, description): the
    /// account is deleted, and none will be put back.
    func forgetSetAside(ofUser userID: Int64) throws

    // MARK: - for `ireporter repair`

    /// Row ids above `id`, ascending, at most `limit`: a large table is read
    /// in batches.
    func ids(after id: Int64, limit: Int) throws -> [Int64]
    /// Those of `ids` that have a row now.
    func existing(_ ids: [Int64]) throws -> Set<Int64>
    /// Moves a row out of the photos to a place it can be put back from
    /// (MariaDB: the table `photos_removed`, with the time and `reason`).
    func setAside(id: Int64, reason: String) throws
}

extension PhotoStore {
    /// `add` without details or secret (a photo as the original stored it).
    public func add(userID: Int64, title: [UInt8], publish: (Int64) throws -> Void, unpublish: (Int64) -> Void) throws -> Int64 {
        try add(userID: userID, title: title, details: nil, secret: nil, publish: { id, _ in try publish(id) }, unpublish: unpublish)
    }

    public func add(userID: Int64, title: [UInt8], details: PhotoDetails?, publish: (Int64) throws -> Void,
                    unpublish: (Int64) -> Void) throws -> Int64 {
        try add(userID: userID, title: title, details: details, secret: nil, publish: { id, _ in try publish(id) },
                unpublish: unpublish)
    }

    /// The photos with their secrets in their extras (given one now if they
    /// had none), in one query: the `secret` and `server` extras.
    public func withSecrets(_ found: [(photo: PhotoRecord, extras: PhotoExtras)]) throws -> [(photo: PhotoRecord, extras: PhotoExtras)] {
        let secrets = try secrets(ids: Set(found.map(\.photo.id)))
        return found.map { photo, extras in
            var extras = extras
            extras.secret = secrets[photo.id]
            return (photo, extras)
        }
    }
}

/// What `PhotoStore.deleteOwned` did.
public enum PhotoDeletion: Sendable, Equatable {
    case deleted
    case notFound
    /// Someone else's photo: nothing changed.
    case notOwner
}
