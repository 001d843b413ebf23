/// Where a photo and its thumbnail are kept once uploaded: the upload
/// folder (`UploadFolder`) or an S3-compatible bucket (`S3PhotoFileStore`),
/// as `photo_store` says.
public protocol PhotoFileStore {
    /// A new temporary file on a local file system (for the folder, its
    /// own, so that publishing is a rename); the caller removes it unless
    /// it was published.
    func makeSpool() throws(SystemError) -> SpoolFile
    /// Where `makeSpool` makes them (the Mastodon API's waiting media are kept there too).
    var spoolDirectory: String { get }
    /// Makes the photo (a spool file, consumed) and its thumbnail visible
    /// under the photo's id (and, with a secret, in the photos' tree),
    /// durably: stored when it returns, before the row commits. A
    /// `StoreError` that `isUnavailable` is a store down (try again).
    func publish(photoSpool: String, thumbnail: [UInt8], id: Int64, secret: PhotoSecret?) throws
    /// Removes what `publish` stored under `secret` (a row that did not
    /// commit): its 2012 names, its original in the tree.
    func remove(id: Int64, secret: PhotoSecret?)
    /// Removes a deleted photo's files, every size of it, durably.
    func discard(id: Int64) throws
    /// The photo as stored (in the tree under its secret, else under its
    /// 2012 name); nil when it has no file.
    func original(id: Int64, secret: PhotoSecret?) throws -> [UInt8]?
    /// The photo's size as shown (EXIF orientation applied), read from its
    /// file's header alone, for a photo whose size was never kept (stored
    /// by the PHP version or before migration 003; a bucket's first bytes of
    /// the object); nil when there is no such file, or no header in it.
    func originalDimensions(id: Int64, secret: PhotoSecret?) -> (width: Int, height: Int)?
}

extension PhotoFileStore {
    public func originalDimensions(id: Int64, secret: PhotoSecret?) -> (width: Int, height: Int)? { nil }
}

/// What the size route (`PhotoSizes`) needs of the photo store: a size
/// kept already, a local file to render one from, and the rendered size kept.
public protocol PhotoSizeFiles {
    /// Where a size's temporary files go (`PhotoFileStore.makeSpool`'s folder).
    var spoolDirectory: String { get }
    /// The size's bytes when it is stored already.
    func storedSize(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws -> [UInt8]?
    /// Its length when it is stored already, read without its bytes where the store can.
    func storedSizeLength(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws -> Int?
    /// The original under its name in the tree, given it from its 2012 name
    /// when the tree lacks it; nil when the photo has no file.
    func originalInTree(id: Int64, secret: PhotoSecret) throws -> [UInt8]?
    /// Runs `render` on a local file of the best source for `size` (the
    /// smallest larger size of its kind, else the original); nil when the
    /// photo has no file.
    func withSource<Result>(for size: PhotoSize, id: Int64, secret: PhotoSecret,
                            _ render: (String) throws -> Result) throws -> Result?
    /// Keeps a rendered size, durably, for the web server to serve from then on.
    func publishSize(_ jpeg: [UInt8], id: Int64, secret: PhotoSecret, size: PhotoSize) throws
    /// Removes a size this route placed for a photo deleted meanwhile (none there is no error).
    func removeSize(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws
}

extension PhotoSizeFiles {
    public func storedSizeLength(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws -> Int? {
        try storedSize(size, id: id, secret: secret)?.count
    }
}

extension PhotoSize {
    /// The sizes a copy of `self` is best rendered from, best first: the
    /// larger ones of its kind (square or box), smallest first, then the original.
    var renderSources: [PhotoSize] {
        let larger = PhotoSize.allCases.filter { candidate in
            guard let bound = candidate.bound, let target = self.bound else { return false }
            return candidate.isSquare == isSquare && bound > target
        }.sorted { $0.bound! < $1.bound! }
        return larger + [.original]
    }
}
