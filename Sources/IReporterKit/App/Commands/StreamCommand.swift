/// `stream`: the newest 50 photos, or the one with `IdPhoto`. Optional,
/// beyond the original: `since` / `before` (cursors: photos newer / older
/// than an id), `count` (1-100), `IdUser` (one person's photos), `extras`
/// (fields added to each photo). Without them the answer is the original's.
public struct StreamCommand: Command {
    public struct Input: CommandInput {
        /// 0: the whole stream (PHP's `(int)` of a missing or non-numeric value).
        public let photoID: Int64
        /// Nil when none of `since`, `before`, `count` was sent.
        public let page: PageCursor?
        public let userID: Int64?
        public let extras: [StreamExtra]

        public init(from parameters: any RequestParameters) throws {
            photoID = PHPStrings.intCast(parameters.field("IdPhoto") ?? [])
            page = ParameterRules.hasCursor(parameters) ? try ParameterRules.cursor(parameters) : nil
            userID = try ParameterRules.number(parameters, "IdUser")
            extras = try parameters.field("extras").flatMap { $0.isEmpty ? nil : try StreamExtra.list($0) } ?? []
        }
    }

    public enum Failure: APIFailure {
        case broken
        public var message: String { "Photo stream is broken" }
    }

    /// How many photos the stream shows, newest first (the original's LIMIT).
    public static let length = 50

    private let photos: any PhotoStore
    private let votes: any VoteStore
    private let sessions: any SessionStore
    private let cache: StreamCache

    public init(_ services: AppServices) {
        photos = services.photos
        votes = services.votes
        sessions = services.sessions
        cache = StreamCache(counters: services.counters, maxAgeMillis: services.policy.streamCacheMillis)
    }

    /// The photos with their extras: the newest ones' counts and details from
    /// the cache (then only the viewer's votes are asked for), any other page
    /// in one query.
    private func withExtras(_ input: Input, viewer: SignedInUser?) throws -> [(photo: PhotoRecord, extras: PhotoExtras)] {
        guard input.photoID == 0, input.page == nil, input.userID == nil else {
            let page = input.photoID != 0 ? .single(input.photoID) : input.page ?? PageCursor(count: Self.length)
            return try photos.photosWithExtras(in: page, userID: input.photoID != 0 ? nil : input.userID, viewer: viewer?.id)
        }
        var found = try cache.photosWithExtras { try photos.photosWithExtras(in: PageCursor(count: Self.length), userID: nil, viewer: nil) }
        if let viewer {
            let mine = try votes.votes(by: viewer.id, on: found.map(\.photo.id))
            for index in found.indices { found[index].extras.myVote = mine[found[index].photo.id] }
        }
        return found
    }

    public func run(_ input: Input, in context: CommandContext) throws -> RenderedJSON {
        do {
            if !input.extras.isEmpty {
                let viewer = input.extras.contains(.myvote) ? try SignedInUser.of(context, in: sessions) : nil
                let found = try withExtras(input, viewer: viewer)
                return RenderedJSON(json: PhotoListWithExtras(photos: found, fields: input.extras, hasViewer: viewer != nil).json)
            }
            if input.photoID != 0 {
                return RenderedJSON(json: PhotoList(photos: try photos.photo(id: input.photoID).map { [$0] } ?? []).json)
            }
            let newest = { try photos.newest(limit: Self.length) }
            guard input.page != nil || input.userID != nil else { return RenderedJSON(json: try cache.answer(newest)) }
            let page = input.page ?? PageCursor(count: Self.length)
            // Polling for what is new: answered from the cached stream when it holds it.
            if input.userID == nil, page.before == .max,
               let new = try cache.photos(newerThan: page.since, count: page.count, length: Self.length, newest) {
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
