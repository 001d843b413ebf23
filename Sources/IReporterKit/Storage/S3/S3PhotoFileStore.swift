#if canImport(Glibc)
import Glibc
#endif

/// Photos in an S3-compatible bucket (`photo_store = s3`), each under the
/// path its URL has below `/iReporter/`: `upload/<IdPhoto>.jpg` and
/// `upload/<IdPhoto>-thumb.jpg` (the 2012 names, as `legacy_photo_urls`
/// says, as `UploadFolder` does) and the tree's
/// `photos/<a>/<b>/<IdPhoto>_<secret>[_<letter>].jpg`. Every PUT is
/// acknowledged by the store before `publish` returns, so before the row
/// commits. Spool files stay on this host, in `spoolDirectory`. One
/// connection, reused: a store per worker, never shared between threads.
public final class S3PhotoFileStore: PhotoFileStore, PhotoSizeFiles {
    public let client: S3Client
    public let spoolDirectory: String
    public let legacyNames: Bool

    public init(client: S3Client, spoolDirectory: String, legacyNames: Bool = true) {
        (self.client, self.spoolDirectory, self.legacyNames) = (client, spoolDirectory, legacyNames)
    }

    public static func photoKey(id: Int64) -> String { "upload/\(id).jpg" }
    public static func thumbnailKey(id: Int64) -> String { "upload/\(id)-thumb.jpg" }
    public static func treeKey(id: Int64, secret: PhotoSecret, size: PhotoSize) -> String {
        "\(PhotoTree.folderName)/\(PhotoTree.leaf(of: id))/\(PhotoTree.fileName(id: id, secret: secret, size: size))"
    }
    /// Every size of the photo starts so, whatever its secret.
    static func treePrefix(id: Int64) -> String { "\(PhotoTree.folderName)/\(PhotoTree.leaf(of: id))/\(id)_" }

    /// What an object of the bucket is, by its key; nil for a key that is
    /// not exactly one of the names this store writes.
    public static func kind(ofKey key: String) -> PhotoFileKind? {
        let segments = key.split(separator: "/", omittingEmptySubsequences: false)
        if segments.count == 2, segments[0] == "upload", let file = UploadFolder.photoFile(String(segments[1])) {
            return file.isThumbnail ? .thumbnail(id: file.id) : .photo(id: file.id)
        }
        if segments.count == 4, segments[0] == PhotoTree.folderName, let file = PhotoTree.parse(fileName: segments[3]),
           key == treeKey(id: file.id, secret: file.secret, size: file.size) {
            return .size(id: file.id, secret: file.secret, size: file.size)
        }
        return nil
    }

    /// Whether the photo has its original in the bucket (any secret), asked now.
    func hasOriginal(id: Int64) throws -> Bool {
        try client.exists(Self.photoKey(id: id))
            || client.list(prefix: Self.treePrefix(id: id)).contains { Self.kind(ofKey: $0.key)?.isOriginal == true }
    }

    public func makeSpool() throws(SystemError) -> SpoolFile { try SpoolFile(directory: spoolDirectory) }

    /// PUTs the original into the tree (with a secret), then its 2012 name
    /// and thumbnail; the spool is removed once all are stored. What a
    /// failed publish wrote is deleted again, unless the store is
    /// unreachable: then `ireporter repair` finds it without a row.
    public func publish(photoSpool: String, thumbnail: [UInt8], id: Int64, secret: PhotoSecret?) throws {
        guard let photo = readFile(photoSpool) else { throw SystemError("read \(photoSpool)") }
        var objects: [(key: String, bytes: [UInt8])] = []
        if let secret { objects.append((Self.treeKey(id: id, secret: secret, size: .original), photo)) }
        if legacyNames || secret == nil {
            objects += [(Self.photoKey(id: id), photo), (Self.thumbnailKey(id: id), thumbnail)]
        }
        var written: [String] = []
        do throws(S3Error) {
            for object in objects {
                try client.put(object.key, object.bytes)
                written.append(object.key)
            }
        } catch {
            if !error.unreachable { for key in written { try? client.delete(key) } }
            throw error
        }
        unlink(photoSpool)
    }

    public func remove(id: Int64, secret: PhotoSecret?) {
        do {
            for key in [Self.photoKey(id: id), Self.thumbnailKey(id: id)] + (secret.map { [Self.treeKey(id: id, secret: $0, size: .original)] } ?? []) {
                try client.delete(key)
            }
        } catch {
            Log.error("photo \(id): \(error); `ireporter repair` removes its objects")
        }
    }

    /// DELETEs its 2012 names and every size of the tree (listed: any secret).
    public func discard(id: Int64) throws {
        for key in [Self.photoKey(id: id), Self.thumbnailKey(id: id)] + (try client.list(prefix: Self.treePrefix(id: id)).map(\.key)) {
            try client.delete(key)
        }
    }

    /// A 2012 name's object (`<IdPhoto>.jpg`, `<IdPhoto>-thumb.jpg`); nil
    /// for any other name or a missing object.
    public func legacyObject(named name: Substring) throws -> [UInt8]? {
        guard UploadFolder.photoFile(String(name)) != nil else { return nil }
        return try client.get("upload/\(name)")
    }

    public func storedSize(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws -> [UInt8]? {
        try client.get(Self.treeKey(id: id, secret: secret, size: size))
    }

    public func original(id: Int64, secret: PhotoSecret?) throws -> [UInt8]? {
        try secret.flatMap { try storedSize(.original, id: id, secret: $0) } ?? client.get(Self.photoKey(id: id))
    }

    public func originalInTree(id: Int64, secret: PhotoSecret) throws -> [UInt8]? {
        if let original = try storedSize(.original, id: id, secret: secret) { return original }
        guard let legacy = try client.get(Self.photoKey(id: id)) else { return nil }
        try client.put(Self.treeKey(id: id, secret: secret, size: .original), legacy)
        return legacy
    }

    /// Where a photo's header (its size, its orientation) ends: after its
    /// EXIF (at most 64 KiB) and what else a camera puts first.
    static let headerBytes = 256 * 1024

    /// A photo without details (a PHP-era one): its size from its header,
    /// the first bytes of the original (a ranged GET), for Flickr's lists
    /// and `getSizes`, whose clients read every size's dimensions.
    public func originalDimensions(id: Int64, secret: PhotoSecret?) -> (width: Int, height: Int)? {
        let keys = (secret.map { [Self.treeKey(id: id, secret: $0, size: .original)] } ?? []) + [Self.photoKey(id: id)]
        for key in keys {
            do {
                guard let head = try client.prefix(key, length: Self.headerBytes) else { continue }
                return try withLocalCopy(of: head) { path in
                    let header = try Thumbnailer.readHeader(ofFileAt: path)
                    return (header.displayWidth, header.displayHeight)
                }
            } catch {
                Log.warning("the size of photo \(id) (\(key)): \(error)")
                return nil
            }
        }
        return nil
    }

    /// The source is fetched into a spool file of this host for the decoder.
    public func withSource<Result>(for size: PhotoSize, id: Int64, secret: PhotoSecret,
                                   _ render: (String) throws -> Result) throws -> Result? {
        var source: [UInt8]?
        for candidate in size.renderSources where source == nil {
            source = try storedSize(candidate, id: id, secret: secret)
        }
        guard let bytes = try source ?? client.get(Self.photoKey(id: id)) else { return nil }
        return try withLocalCopy(of: bytes, render)
    }

    /// Runs `body` on a spool file holding `bytes` (the decoders read files), removed after.
    func withLocalCopy<Result>(of bytes: [UInt8], _ body: (String) throws -> Result) throws -> Result {
        try SpoolFile.withFile(holding: bytes, in: spoolDirectory, body)
    }

    public func publishSize(_ jpeg: [UInt8], id: Int64, secret: PhotoSecret, size: PhotoSize) throws {
        try client.put(Self.treeKey(id: id, secret: secret, size: size), jpeg)
    }

    public func removeSize(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws {
        try client.delete(Self.treeKey(id: id, secret: secret, size: size))
    }
}
