/// A photo's size asked for by its URL (`PhotoTree.parse(urlPath:)`) that
/// the web server did not find on disk: checked against the photo's secret,
/// rendered once from the best source, kept in the photo store (the tree,
/// or the bucket) to be served from then on. Nothing is decoded or written for a photo
/// that does not exist or a secret that is not the photo's.
///
/// A delete wins over a size being made: `delete` removes the row, then
/// the photo's files. A size placed after that sweep is found here by the
/// second look at the row (after placing, never before), removed, and
/// answered 404; a size placed before the row went is the sweep's. A photo
/// whose original is gone (no file under either name) is a 404 too, logged
/// once per photo by each worker, and listed by `ireporter repair`. The
/// PHP version stored any file: a PNG or HEIC original under its `.jpg`
/// name has its sizes made of it as the Mastodon API's media are; one no
/// size can be made of (beyond the limits, unreadable) is a 404, logged once.
public final class PhotoSizes {
    public enum Outcome {
        /// The size's bytes (now on disk too).
        case found([UInt8])
        /// No such photo, not this secret, deleted meanwhile, or its original is gone.
        case notFound
        /// The photo's file cannot be decoded, or the disk or the database failed (logged).
        case failed
    }

    private let photos: any PhotoStore
    private let files: any PhotoSizeFiles
    private let renderer: PhotoSizeRenderer
    private let decodeGate: DecodeGate?
    private let policy: AppServices.Policy
    /// The photos whose lost original this worker has logged already.
    private var loggedLost = RecentIDs(capacity: 1024)
    /// Those whose original could not be decoded, logged already.
    private var loggedUndecodable = RecentIDs(capacity: 1024)

    public init(photos: any PhotoStore, files: any PhotoSizeFiles, policy: AppServices.Policy, decodeGate: DecodeGate?) {
        self.photos = photos
        self.files = files
        self.policy = policy
        self.decodeGate = decodeGate
        renderer = PhotoSizeRenderer(maxDecodeBytes: policy.maxDecodeBytes)
    }

    /// For a HEAD: the size's length when it is stored already, its bytes
    /// not read (a HEAD that reached the server by a path the web server does
    /// not serve from disk would otherwise cost a read of the original for
    /// nothing); nil otherwise, and `size` answers.
    public func storedLength(_ size: PhotoSize, id: Int64, secret: PhotoSecret) -> Int? {
        guard (try? isCurrent(id, secret)) == true else { return nil }
        return try? files.storedSizeLength(size, id: id, secret: secret)
    }

    public func size(_ size: PhotoSize, id: Int64, secret: PhotoSecret) -> Outcome {
        do {
            guard try isCurrent(id, secret) else { return .notFound }
        } catch {
            Log.error("size of photo \(id): \(error)")
            return .failed
        }
        // Set once this request may have put a file of the photo in place.
        var placing = false
        do {
            // Rendered by another request since the web server looked.
            if let bytes = try files.storedSize(size, id: id, secret: secret) { return .found(bytes) }
            let rendered: [UInt8]?
            if size == .original {
                placing = true
                rendered = try files.originalInTree(id: id, secret: secret)
            } else {
                rendered = try files.withSource(for: size, id: id, secret: secret) { source in
                    try decodeGate.decoding(limit: policy.concurrentDecodes) {
                        do {
                            return try renderer.render(size, ofFileAt: source, maxPixels: policy.maxImagePixels).jpeg
                        } catch JPEGImageError.notAJPEG(let message) {
                            return try render(size, ofAnotherFormatAt: source) ?? { throw JPEGImageError.notAJPEG(message) }()
                        }
                    }
                }
                placing = rendered != nil
                if let rendered { try files.publishSize(rendered, id: id, secret: secret, size: size) }
            }
            guard let rendered else { return try lostOriginal(id, secret) }
            // Placed: a delete that removed the row meanwhile may have swept the folder already.
            guard try isCurrent(id, secret) else {
                try files.removeSize(size, id: id, secret: secret)
                return .notFound
            }
            return .found(rendered)
        } catch {
            // The source removed under the decoder, or a step failed: by a delete, the delete wins.
            if let current = try? isCurrent(id, secret), !current {
                if placing { try? files.removeSize(size, id: id, secret: secret) }
                return .notFound
            }
            if case JPEGImageError.unreadable = error, (try? lostOriginal(id, secret)) != nil { return .notFound }
            if let failure = error as? JPEGImageError, failure.isInvalidImage {
                // The file's own fault, the same at every request: not "try again".
                if loggedUndecodable.insert(id) {
                    Log.warning("photo \(id): no size can be made of its original (\(failure)): its sizes answer 404")
                }
                return .notFound
            }
            Log.error("size \(size.letter ?? "-") of photo \(id): \(error)")
            // Made again next time rather than risk outliving a delete unseen
            // (never the original: it may be the photo's only copy).
            if placing && size != .original { try? files.removeSize(size, id: id, secret: secret) }
            return .failed
        }
    }

    /// A size of a PNG or HEIC original (a file the PHP version stored as
    /// `<IdPhoto>.jpg`): its JPEG, as the Mastodon API makes its media's
    /// (`UploadedImage`, within `max_image_pixels`), in a spool file the
    /// size is rendered from. Nil for any other file.
    private func render(_ size: PhotoSize, ofAnotherFormatAt path: String) throws -> [UInt8]? {
        guard let original = readFile(path) else { return nil }
        let format = UploadedImage.format(of: original)
        guard format == .png || format == .heic else { return nil }
        let jpeg: [UInt8]
        do {
            jpeg = try UploadedImage.jpeg(of: original, format: format, maxPixels: policy.maxImagePixels)
        } catch {
            throw JPEGImageError.unsupported("a \(format) original that cannot be read: \(error)")
        }
        return try SpoolFile.withFile(holding: jpeg, in: files.spoolDirectory) { path in
            try renderer.render(size, ofFileAt: path, maxPixels: policy.maxImagePixels).jpeg
        }
    }

    private func isCurrent(_ id: Int64, _ secret: PhotoSecret) throws -> Bool {
        try photos.secret(of: id) == secret
    }

    /// No file to make the size from: a 404, as for a photo deleted meanwhile
    /// (looked at again), or one whose original is gone (logged once).
    private func lostOriginal(_ id: Int64, _ secret: PhotoSecret) throws -> Outcome {
        if try isCurrent(id, secret), loggedLost.insert(id) {
            Log.error("photo \(id) has a row but no original file: its sizes answer 404; `ireporter repair` lists it")
        }
        return .notFound
    }
}

/// The last `capacity` ids seen, for saying something once per id in bounded memory.
struct RecentIDs {
    let capacity: Int
    private var members = Set<Int64>()
    private var order: [Int64] = []
    private var oldest = 0

    init(capacity: Int) { self.capacity = capacity }

    /// Whether `id` is new (then it is kept, in place of the oldest when full).
    mutating func insert(_ id: Int64) -> Bool {
        guard !members.contains(id) else { return false }
        if order.count < capacity {
            order.append(id)
        } else {
            members.remove(order[oldest])
            order[oldest] = id
            oldest = (oldest + 1) % capacity
        }
        members.insert(id)
        return true
    }
}
