#if canImport(Glibc)
import Glibc
#endif

/// `export`: everything the signed-in user gave, as one zip to download
/// (`ireporter-<IdUser>.zip`): `photos/<IdPhoto>.jpg`, each photo as
/// stored, and `ireporter.json`, the account with its photos, comments and
/// votes. The zip is written to a spool file a photo at a time and sent
/// from it in chunks: memory holds one photo and the zip's directory,
/// however many photos there are. A form command only (JSON carries no file).
public struct ExportCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "export", "Download your photos (as stored), comments and votes: a zip with a JSON file.", rateLimit: Self.rateLimit,
        result: .zip)

    public enum Failure: APIFailure {
        case tooManyExports

        public var message: String { "Too many exports, please try again later" }
        public var kind: FailureKind { .rateLimited }
    }

    static let rateLimit = RateLimit("export_rate_limit", \.exportRateLimit, counter: "export", failure: Failure.tooManyExports)

    /// Rows read at once.
    static let pageSize = 200

    private let users: any UserStore
    private let photos: any PhotoStore
    private let files: any PhotoFileStore
    private let comments: any CommentStore
    private let votes: any VoteStore
    private let now: () -> Int64
    private let counters: any SharedCounters
    private let perHour: Int

    public init(_ services: AppServices) {
        counters = services.counters
        perHour = Self.rateLimit.perHour(services.policy)
        users = services.users
        photos = services.photos
        files = services.photoFiles
        comments = services.comments
        votes = services.votes
        now = services.now
    }

    public func run(_ input: NoInput, as user: SignedInUser, in context: CommandContext) throws -> ExportArchive {
        guard let account = try users.account(id: user.id) else { throw AuthorizationRequired() }
        try Self.rateLimit.charge(user, perHour: perHour, counters: counters)
        let spool = try files.makeSpool()
        context.removeWhenAnswered(spool.path)
        // Read back once written: the spool's own descriptor is write-only to us.
        let fd = open(spool.path, O_RDWR | O_CLOEXEC)
        _ = spool.close()
        guard fd >= 0 else { throw SystemError("open \(spool.path)") }
        do {
            let exported = now()
            var zip = ZipWriter(fd: fd, path: spool.path, modified: exported)
            let stored = try addPhotos(of: user.id, to: &zip)
            try zip.beginEntry("ireporter.json")
            let registered = try photos.person(id: user.id)?.registered
            try writeJSON(account, registered: registered, exported: exported, photoFiles: stored, to: &zip)
            try zip.endEntry()
            let size = try zip.finish()
            return ExportArchive(file: AnswerFile(fd: fd, size: Int(size), downloadName: "ireporter-\(user.id).zip"))
        } catch {
            close(fd)
            throw error
        }
    }

    /// Each photo's file as `photos/<IdPhoto>.jpg`; the ids of those that have one.
    private func addPhotos(of userID: Int64, to zip: inout ZipWriter) throws -> Set<Int64> {
        var stored = Set<Int64>()
        try forEachPage(of: userID) { page in
            let secrets = try photos.secrets(ids: Set(page.map(\.id)))
            for photo in page {
                guard let bytes = try files.original(id: photo.id, secret: secrets[photo.id]) else {
                    Log.warning("export: photo \(photo.id) has no file")
                    continue
                }
                try zip.add("photos/\(photo.id).jpg", bytes)
                stored.insert(photo.id)
            }
        }
        return stored
    }

    private func forEachPage(of userID: Int64, _ body: ([PhotoRecord]) throws -> Void) throws {
        var before = Int64.max
        while case let page = try photos.photos(in: PageCursor(before: before, count: Self.pageSize), userID: userID),
              let last = page.last {
            try body(page)
            before = last.id
        }
    }

    /// `{"account":…,"exported":…,"photos":[…],"comments":[…],"votes":[…]}`,
    /// ids and numbers as strings as the API gives them, written a page at a time.
    /// `registered` is null for an account made before its day was kept (migration 016).
    private func writeJSON(_ account: UserRecord, registered: Int64?, exported: Int64, photoFiles: Set<Int64>,
                           to zip: inout ZipWriter) throws {
        var json = PHPJSONWriter()
        json.raw("{\"account\":{\"IdUser\":")
        json.string(String(account.id))
        json.raw(",\"username\":")
        json.string(StoredText.text(account.username))
        json.number("registered", registered)
        json.raw("}")
        json.number("exported", exported)
        json.raw(",\"photos\":[")
        var list = JSONList()
        try forEachPage(of: account.id) { page in
            let details = try photos.details(ids: Set(page.map(\.id)))
            for photo in page {
                list.open(&json, "{\"IdPhoto\":", photo.id)
                // The person's own title whatever its bytes (the form API's null is PHP's).
                json.raw(",\"title\":")
                if let title = photo.title { json.string(StoredText.text(title)) } else { json.raw("null") }
                json.number("created", details[photo.id]?.created)
                json.text("file", photoFiles.contains(photo.id) ? "photos/\(photo.id).jpg" : nil)
                json.raw("}")
            }
            try flush(&json, to: &zip)
        }
        json.raw("],\"comments\":[")
        list = JSONList()
        var before = Int64.max
        while case let page = try comments.comments(byUser: account.id, page: PageCursor(before: before, count: Self.pageSize)),
              let last = page.last {
            for comment in page {
                list.open(&json, "{\"IdComment\":", comment.id)
                json.number("IdPhoto", comment.photoID)
                json.raw(",\"text\":")
                json.string(StoredText.text(comment.text))
                json.number("created", comment.created)
                json.raw("}")
            }
            before = last.id
            try flush(&json, to: &zip)
        }
        json.raw("],\"votes\":[")
        list = JSONList()
        var after: Int64 = 0
        while case let page = try votes.votes(byUser: account.id, after: after, limit: Self.pageSize), let last = page.last {
            for vote in page {
                list.open(&json, "{\"IdPhoto\":", vote.photoID)
                json.number("vote", vote.vote.rawValue)
                json.raw("}")
            }
            after = last.photoID
            try flush(&json, to: &zip)
        }
        json.raw("]}")
        try flush(&json, to: &zip)
    }

    private func flush(_ json: inout PHPJSONWriter, to zip: inout ZipWriter) throws {
        try zip.write(json.bytes)
        json = PHPJSONWriter()
    }
}

/// The elements of a JSON array written across pages: a comma before all but the first.
private struct JSONList {
    private var empty = true

    /// Starts an element: `opening` (`{"IdPhoto":`) and its id, as a string.
    mutating func open(_ json: inout PHPJSONWriter, _ opening: StaticString, _ id: Int64) {
        if !empty { json.raw(",") }
        empty = false
        json.raw(opening)
        json.string(String(id))
    }
}

/// `export`'s answer: the zip, sent from its file.
public struct ExportArchive: CommandOutput {
    public let file: AnswerFile?
    public var json: [UInt8] { [] }
    public var contentType: String { "application/zip" }
}
