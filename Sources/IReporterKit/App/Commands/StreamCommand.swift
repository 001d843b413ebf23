/// `stream`: the newest 50 photos, or the one with `IdPhoto`. Optional,
/// beyond the original: `since` / `before` (cursors: photos newer / older
/// than an id), `count` (1-100), `IdUser` (one person's photos), `extras`
/// (fields added to each photo). Without them the answer is the original's.
public struct StreamCommand: BatchReadingCommand {
    public let descriptor = CommandDescriptor(
        "stream", "The newest photos, a page of them, or one (IdPhoto).",
        parameters: [Input.photo] + CommandParameter.cursor + [Input.user, .extras()], readOnly: true, failures: [.other],
        result: .photos)

    public struct Input: CommandInput {
        static let photo = CommandParameter("IdPhoto", .phpInteger, "this photo alone (the 2012 app's: any other value is none)")
        static let user = CommandParameter("IdUser", .integer(1...Int64.max), "one person's photos")

        /// 0: the whole stream (PHP's `(int)` of a missing or non-numeric value).
        public let photoID: Int64
        /// Nil when none of `since`, `before`, `count` was sent.
        public let page: PageCursor?
        public let userID: Int64?
        public let extras: [StreamExtra]

        public init(from parameters: any RequestParameters) throws {
            photoID = Self.photo.phpInteger(parameters)
            page = try ParameterRules.cursor(parameters)
            userID = try Self.user.integer(parameters)
            extras = try CommandParameter.extras().list(parameters)
        }
    }

    public enum Failure: APIFailure {
        case broken
        public var message: String { "Photo stream is broken" }
    }

    /// How many photos the stream shows, newest first (the original's LIMIT).
    public static let length = 50

    private let photos: any PhotoStore
    private let media: any MediaStore
    private let votes: any VoteStore
    private let sessions: any SessionStore
    private let cache: StreamCache

    public init(_ services: AppServices) {
        photos = services.photos
        media = services.media
        votes = services.votes
        sessions = services.sessions
        cache = StreamCache(counters: services.counters, maxAgeMillis: Int64(services.policy.streamCacheMillis), clock: services.clock,
                            answerFile: services.streamAnswer)
    }

    /// The full stream's answer made again for the host's nginx
    /// (`stream_answer_file`, the answer refresher).
    func remakeAnswerFile() throws {
        try cache.remakeAnswerFile { try photos.newest(limit: Self.length) }
    }

    /// The answer with extras: the newest photos' from the cache (per viewer
    /// and fields), any other page in one query.
    private func withExtras(_ input: Input, viewer: SignedInUser?) throws -> [UInt8] {
        let render = { PhotoListWithExtras(photos: $0, fields: input.extras, hasViewer: viewer != nil).json }
        guard input.photoID == 0, input.page == nil, input.userID == nil else {
            let page = input.photoID != 0 ? .single(input.photoID) : input.page ?? PageCursor(count: Self.length)
            let found = try photos.photosWithExtras(in: page, userID: input.photoID != 0 ? nil : input.userID, viewer: viewer?.id)
            return render(try StreamExtra.completing(found, for: input.extras, photos: photos, media: media))
        }
        // The cached newest photos serve every set of fields: read with their secrets and descriptions.
        return try cache.answerWithExtras(viewer: viewer?.id, fields: input.extras) {
            try StreamExtra.completing(try photos.photosWithExtras(in: PageCursor(count: Self.length), userID: nil, viewer: nil),
                                       for: StreamExtra.allCases, photos: photos, media: media)
        } votes: { viewer, ids in
            try votes.votes(by: viewer, on: ids)
        } render: { render($0) }
    }

    /// A batch's single-photo calls (`IdPhoto` without extras) read their
    /// photos with one query.
    public func readAhead(_ inputs: [Input]) {
        let ids = Set(inputs.filter { $0.photoID != 0 && $0.extras.isEmpty }.map(\.photoID))
        if !ids.isEmpty { cache.readAhead(ids, photos.photos(ids:)) }
    }

    public func endBatch() { cache.endBatch() }

    public func run(_ input: Input, in context: CommandContext) throws -> RenderedJSON {
        do {
            if !input.extras.isEmpty {
                let viewer = input.extras.contains(.myvote) ? try SignedInUser.of(context, in: sessions) : nil
                return RenderedJSON(json: try withExtras(input, viewer: viewer))
            }
            if input.photoID != 0 {
                let photo = try cache.photo(id: input.photoID) { try photos.photo(id: input.photoID) }
                return RenderedJSON(json: PhotoList(photos: photo.map { [$0] } ?? []).json)
            }
            let newest = { try photos.newest(limit: Self.length) }
            guard input.page != nil || input.userID != nil else { return RenderedJSON(json: try cache.answer(newest)) }
            let page = input.page ?? PageCursor(count: Self.length)
            // Polling for what is new: answered from the cached stream when it holds it.
            if input.userID == nil, page.before == .max,
               let new = try cache.photos(newerThan: page, length: Self.length, newest) {
                return RenderedJSON(json: PhotoList(photos: new).json)
            }
            return RenderedJSON(json: PhotoList(photos: try photos.photos(in: page, userID: input.userID)).json)
        } catch let error as any StoreError where !error.isUnavailable {
            // The original's answer when its query failed (a broken table).
            Log.error("stream: \(error)")
            throw Failure.broken
        }
    }
}
