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

/// The photos' rows. The files are not its business (`PhotoFileStore`),
/// except that a photo's row is committed only once its files are in place.
public protocol PhotoStore: AnyObject {
    /// The newest photos first, at most `limit`.
    func newest(limit: Int) throws -> [PhotoRecord]
    func photo(id: Int64) throws -> PhotoRecord?
    /// Adds a row and runs `publish` with its new id before the row is
    /// committed, so that no committed row lacks its files. When `publish`
    /// throws, nothing is stored and its error is rethrown. When the commit
    /// surely failed, `unpublish` removes the files; when its outcome cannot
    /// be known, the files stay (`ireporter repair` settles it) and the
    /// error is thrown.
    func add(userID: Int64, title: [UInt8], publish: (Int64) throws -> Void, unpublish: (Int64) -> Void) throws -> Int64

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
