/// `upload`: a logged-in user's photo (the `file` part) with its `title`.
/// The photo is checked by decoding it whole (which makes the thumbnail),
/// stored without its metadata, and its row committed only once both files
/// are durably in place.
public struct UploadCommand: SignedInCommand {
    public struct Input: CommandInput {
        public let file: UploadedFile?
        public let title: [UInt8]

        public init(from parameters: any RequestParameters) {
            file = parameters.file("file")
            title = parameters.field("title") ?? []
        }
    }

    public enum Failure: APIFailure {
        case malfunction
        case serverProblem
        case notAJPEG
        case tooManyPixels(limit: Int)
        /// A progressive photo beyond what one decode may hold; `limit` in
        /// megapixels for a photo of its layout (components, subsampling).
        case tooManyPixelsForProgressive(limit: Int)
        case tooManyUploads
        case invalidTitle
        case titleNotUTF8

        public var message: String {
            switch self {
            case .malfunction: "Upload malfunction"
            case .serverProblem: "Upload on server problem"
            case .notAJPEG: "The photo is not a valid JPEG image"
            case .tooManyPixels(let limit): "The photo has too many pixels (the limit is \(limit / 1_000_000) megapixels)"
            case .tooManyPixelsForProgressive(let limit):
                "The photo has too many pixels for a progressive JPEG (the limit is \(limit) megapixels for this one)"
            case .tooManyUploads: "Too many uploads, please try again later"
            case .invalidTitle: "Titles cannot contain control characters"
            case .titleNotUTF8: "Titles must be UTF-8 text"
            }
        }
    }

    /// The original `photos.title` is varchar(100).
    public static let maxTitleBytes = 100

    private let photos: any PhotoStore
    private let files: any PhotoFileStore
    private let counters: any SharedCounters
    private let policy: AppServices.Policy
    private let now: () -> Int64
    private let thumbnailer: Thumbnailer
    private let decodeGate: DecodeGate?

    public init(_ services: AppServices) {
        photos = services.photos
        files = services.photoFiles
        counters = services.counters
        policy = services.policy
        now = services.now
        thumbnailer = Thumbnailer(maxDecodeBytes: services.policy.maxDecodeBytes)
        decodeGate = services.decodeGate
    }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> Successful {
        guard let spool = input.file?.spoolPath else { throw Failure.malfunction }
        do {
            try TextRules.check(input.title)
        } catch .notUTF8 {
            throw Failure.titleNotUTF8
        } catch {
            throw Failure.invalidTitle
        }
        if policy.uploadsPerHour > 0,
           !counters.allow("upload:\(user.id)", limit: Int64(policy.uploadsPerHour), windowSeconds: 3600) {
            throw Failure.tooManyUploads
        }
        let imageStarted = monotonicMicros()
        let (thumbnail, cleanPhoto, header) = try preparePhoto(spool: spool, in: context)
        context.imageMicros = monotonicMicros() - imageStarted
        // Titles are stored as sent (no second urldecode: it turned `+` into
        // a space), cut to the column without splitting a UTF-8 character.
        let title = TextRules.fitting(input.title, maxBytes: Self.maxTitleBytes)
        let details = PhotoDetails(created: now(), width: header.displayWidth, height: header.displayHeight)
        _ = try photos.add(userID: user.id, title: title, details: details, publish: { id in
            do {
                try files.publish(photoSpool: cleanPhoto, thumbnail: thumbnail, id: id)
                context.keep(cleanPhoto)
            } catch {
                Log.error("upload \(id): \(error)")
                throw Failure.serverProblem
            }
        }, unpublish: files.remove)
        counters.bumpStreamGeneration()
        return Successful()
    }

    /// Runs a decode holding one of the gate's slots (memory: at most
    /// `concurrentDecodes` progressive photos' buffers at once).
    private func decodingOneOfFew<R>(_ decode: () throws -> R) throws -> R {
        guard let decodeGate else { return try decode() }
        return try decodeGate.withSlot(limit: policy.concurrentDecodes) { Result(catching: decode) }.get()
    }

    /// The thumbnail, a copy of the photo without EXIF/XMP/IPTC/comments
    /// (GPS position, camera serial), keeping the orientation as a lone tag,
    /// and the photo's header (its size).
    private func preparePhoto(spool: String, in context: CommandContext) throws(Failure) -> ([UInt8], String, JPEGHeader) {
        let thumbnail: JPEGThumbnail
        do {
            thumbnail = try decodingOneOfFew { try thumbnailer.thumbnail(ofFileAt: spool, maxPixels: policy.maxImagePixels) }
        } catch let error as JPEGImageError {
            if case .tooManyPixels = error { throw .tooManyPixels(limit: policy.maxImagePixels) }
            if case .needsTooMuchMemory(let width, let height, let bytes, let limit) = error {
                // The megapixels of this photo's layout that fit the limit.
                throw .tooManyPixelsForProgressive(limit: Int(Double(limit) / Double(bytes) * Double(width * height) / 1e6))
            }
            guard error.isInvalidImage else {
                Log.error("thumbnail: \(error)")
                throw .serverProblem
            }
            throw .notAJPEG
        } catch {
            Log.error("thumbnail: \(error)")
            throw .serverProblem
        }
        let clean: SpoolFile
        do {
            clean = try files.makeSpool()
        } catch {
            Log.error("upload: \(error)")
            throw .serverProblem
        }
        _ = clean.close()
        context.removeWhenAnswered(clean.path)
        do {
            try JPEGMetadataStripper.strip(from: spool, to: clean.path, orientation: thumbnail.source.orientation)
        } catch .io(let message) {
            Log.error("stripping metadata: \(message)")
            throw .serverProblem
        } catch {
            throw .notAJPEG
        }
        return (thumbnail.jpeg, clean.path, thumbnail.source)
    }
}
