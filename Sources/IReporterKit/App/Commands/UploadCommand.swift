/// `upload`: a logged-in user's photo (the `file` part) with its `title`.
/// The photo is checked by decoding it whole (which makes the thumbnail),
/// stored without its metadata, and its row committed only once both files
/// are durably in place. With `effect`, the effect is rendered into the
/// stored photo and its thumbnail (`EffectRenderer`).
public struct UploadCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "upload", "Store a photo (the file part, a JPEG) with its title.", parameters: [Input.title, Input.effect],
        fileParts: ["file"], rateLimit: UploadCommand.rateLimit, failures: [.other], result: .successful)

    public struct Input: CommandInput {
        static let title = CommandParameter("title", .text(maxBytes: nil), "one line, kept to 100 bytes")
        static let effect = CommandParameter.effect(required: false)
        public let file: UploadedFile?
        public let title: [UInt8]
        public let effect: PhotoEffect?

        public init(from parameters: any RequestParameters) throws {
            file = parameters.file("file")
            title = try Self.title.text(parameters)
            effect = try Self.effect.choice(parameters)
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
        case invisibleTitle
        case blankTitle
        case titleNotUTF8
        /// Not stored within `upload_deadline` of its arrival (`checkDeadline`).
        case tooLate

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
            case .invisibleTitle: "Titles cannot contain invisible characters"
            case .blankTitle: "Titles cannot be blank"
            case .titleNotUTF8: "Titles must be UTF-8 text"
            case .tooLate: "The server took too long to store the photo and did not keep it, please send it again"
            }
        }

        public var kind: FailureKind {
            switch self {
            case .tooManyUploads: .rateLimited
            // The server's own trouble (a write that failed, a full disk):
            // the same photo may go through later, so not the photo's fault
            // where a door says so (the Mastodon API's 503, which apps retry).
            case .serverProblem, .tooLate: .unavailable
            case .malfunction, .notAJPEG, .tooManyPixels, .tooManyPixelsForProgressive, .invalidTitle,
                 .invisibleTitle, .blankTitle, .titleNotUTF8: .other
            }
        }
    }

    static let rateLimit = RateLimit("upload_rate_limit", \.uploadRateLimit, counter: "upload", failure: Failure.tooManyUploads)

    /// The original `photos.title` is varchar(100).
    public static let maxTitleBytes = 100

    private let photos: any PhotoStore
    private let files: any PhotoFileStore
    private let counters: any SharedCounters
    private let policy: AppServices.Policy
    private let now: () -> Int64
    private let clock: any TimeSource
    private let live: (any LiveFeed)?
    private let intake: PhotoIntake

    public init(_ services: AppServices) {
        photos = services.photos
        files = services.photoFiles
        counters = services.counters
        policy = services.policy
        now = services.now
        clock = services.clock
        live = services.live
        intake = PhotoIntake(services)
    }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> Uploaded {
        guard let spool = input.file?.spoolPath else { throw Failure.malfunction }
        do {
            _ = try TextRules.checked(input.title, as: .title)
        } catch {
            switch error {
            case .notUTF8: throw Failure.titleNotUTF8
            case .control, .tooManyLines: throw Failure.invalidTitle
            case .invisible: throw Failure.invisibleTitle
            case .blank: throw Failure.blankTitle
            }
        }
        try Self.rateLimit.charge(user, perHour: Self.rateLimit.perHour(policy), counters: counters)
        try checkDeadline(context, "upload of user \(user.id)")
        let imageStarted = monotonicMicros()
        let prepared = try intake.prepare(spool: spool, effect: input.effect, in: context)
        context.imageMicros = monotonicMicros() - imageStarted
        // (Waited for a decode slot, maybe.)
        try checkDeadline(context, "upload of user \(user.id)")
        // Titles are stored as sent (no second urldecode: it turned `+` into
        // a space), cut to the column without splitting a UTF-8 character.
        let title = TextRules.fitting(input.title, maxBytes: Self.maxTitleBytes)
        let details = PhotoDetails(created: now(), width: prepared.width, height: prepared.height)
        let id = try add(title: title, details: details, prepared: prepared, as: user, in: context)
        counters.noteStreamChanged()
        Log.info("photo \(id) of user \(user.id) stored")
        announce(id)
        return Uploaded(photoID: id)
    }

    private func add(title: [UInt8], details: PhotoDetails, prepared: PhotoIntake.Prepared, as user: SignedInUser,
                     in context: CommandContext) throws -> Int64 {
        var publishedSecret: PhotoSecret?
        return try photos.add(userID: user.id, title: title, details: details, secret: .random(), publish: { id, secret in
            publishedSecret = secret
            do {
                // Without a secret (a database without migration 006) the
                // photo has its 2012 names alone, as a PHP-era photo has.
                try files.publish(photoSpool: prepared.photoPath, thumbnail: prepared.thumbnail, id: id, secret: secret)
                context.keep(prepared.photoPath)
            } catch let error as any StoreError where error.isUnavailable {
                throw error // a store down is "temporarily unavailable", as a database down is
            } catch {
                Log.error("upload \(id): \(error)")
                throw Failure.serverProblem
            }
            // The last moment before the COMMIT (the store's, after this).
            do {
                try checkDeadline(context, "upload \(id) of user \(user.id)")
            } catch {
                files.remove(id: id, secret: secret)
                throw error
            }
        }, unpublish: { files.remove(id: $0, secret: publishedSecret) })
    }

    /// `tooLate` once `upload_deadline` has passed since the request
    /// arrived: its sender, the web server (60 s as shipped) and the
    /// phone's own timeout have given up on the answer by then, so a photo
    /// committed now would be sent again, and stored twice; one not yet
    /// decoded is not worth the work.
    private func checkDeadline(_ context: CommandContext, _ upload: @autoclosure () -> String) throws(Failure) {
        guard policy.uploadDeadline > 0, let arrived = context.arrived else { return }
        let waited = clock.now.millis(since: arrived)
        guard waited > Int64(policy.uploadDeadline) * 1000 else { return }
        Log.warning("\(upload()) dropped: \(waited) ms after its arrival, past upload_deadline")
        throw Failure.tooLate
    }

    /// Tells the live subscribers, with the photo as the stream shows it.
    private func announce(_ id: Int64) {
        guard let live else { return }
        do {
            if let photo = try photos.photo(id: id) { live.publish(PhotoList(photos: [photo]).json) }
        } catch {
            Log.warning("live feed: photo \(id): \(error)")
        }
    }

}

extension UploadCommand.Failure {
    /// The answer to a photo that could not be decoded or rendered: the
    /// photo's fault, or (logged) the server's.
    init(_ error: any Error, maxPixels: Int) {
        guard let error = error as? JPEGImageError else {
            Log.error("image: \(error)")
            self = .serverProblem
            return
        }
        if case .tooManyPixels = error {
            self = .tooManyPixels(limit: maxPixels)
        } else if case .needsTooMuchMemory(let width, let height, let bytes, let limit) = error {
            // The megapixels of this photo's layout that fit the limit.
            self = .tooManyPixelsForProgressive(limit: Int(Double(limit) / Double(bytes) * Double(width * height) / 1e6))
        } else if error.isInvalidImage {
            self = .notAJPEG
        } else {
            Log.error("image: \(error)")
            self = .serverProblem
        }
    }
}
