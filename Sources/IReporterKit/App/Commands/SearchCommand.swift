/// `search`: photos whose title or author's username has every word of `q`
/// (each word matching the start of one: "sun" finds "sunset"; case and
/// accents ignored), in the stream's shape. `sort` is `newest` (default;
/// the next page is `before` the last IdPhoto shown) or `relevance` (whole
/// words before prefixes among the newest 500 matches; the next page is
/// `page` + 1). `count` photos a page, 50 by default. `IdUser`: that
/// person's photos alone. `extras`: the fields `stream` adds
/// (`StreamExtra`), the same way.
public struct SearchCommand: Command {
    public let descriptor = CommandDescriptor(
        "search", "Photos whose title or author has every word of q, newest first or by relevance.",
        parameters: [Input.query, Input.sort, Input.count, Input.before, Input.page, Input.author,
                     .extras(invalid: Failure.unknownExtras)],
        readOnly: true, failures: [.other], result: .photos)

    public struct Input: CommandInput {
        static let query = CommandParameter("q", .text(maxBytes: SearchCommand.maxQueryBytes), required: true,
                                            "the words, at most 6", invalid: Failure.queryTooLong)
        static let sort = CommandParameter.choice("sort", of: PhotoSearchQuery.Order.self,
                                                  "`newest` (default) or `relevance`", invalid: Failure.unknownSort)
        static let count = CommandParameter("count", .integer(1...Int64(SearchCommand.maxCount)),
                                            "photos per page, 1 to 100 (default 50)", invalid: Failure.badCount)
        static let before = CommandParameter("before", .integer(1...Int64(Int32.max)),
                                             "`newest` only: photos with a smaller IdPhoto (the next page)", invalid: Failure.badBefore)
        static let page = CommandParameter("page", .integer(1...Int64(PhotoSearchQuery.relevanceWindow)),
                                           "`relevance` only: the page; relevance pages end at 500 photos", invalid: Failure.badPage)
        static let author = CommandParameter("IdUser", .integer(1...Int64.max), "only this person's photos")

        public let query: PhotoSearchQuery
        public let extras: [StreamExtra]

        public init(from parameters: any RequestParameters) throws {
            let terms = SearchWords.queryTerms(try Self.query.text(parameters))
            guard !terms.isEmpty else { throw Failure.noWords }
            guard terms.count <= SearchCommand.maxTerms else { throw Failure.tooManyWords }
            let order: PhotoSearchQuery.Order = try Self.sort.choice(parameters) ?? .newest
            let count = Int(try Self.count.integer(parameters) ?? Int64(SearchCommand.defaultCount))
            let before = try Self.before.integer(parameters)
            let page = Int(try Self.page.integer(parameters) ?? 1)
            if order == .relevance, before != nil { throw Failure.beforeWithRelevance }
            if order == .newest, page != 1 { throw Failure.pageWithNewest }
            guard (page - 1) * count < PhotoSearchQuery.relevanceWindow else { throw Failure.badPage }
            query = PhotoSearchQuery(terms: terms, scope: PhotoScope(userID: try Self.author.integer(parameters)), order: order,
                                     before: before, offset: (page - 1) * count, limit: count)
            extras = try CommandParameter.extras(invalid: Failure.unknownExtras).list(parameters)
        }
    }

    public enum Failure: APIFailure {
        case noWords, tooManyWords, queryTooLong, unknownSort, badCount, badBefore, badPage
        case beforeWithRelevance, pageWithNewest, unknownExtras, tooBroad, broken

        public var message: String {
            switch self {
            case .noWords: "Search needs at least one word (letters or digits)"
            case .tooManyWords: "Search takes at most \(SearchCommand.maxTerms) words"
            case .queryTooLong: "Search text is too long (at most \(SearchCommand.maxQueryBytes) bytes)"
            case .unknownSort: "sort must be newest or relevance"
            case .badCount: "count must be a number from 1 to \(SearchCommand.maxCount)"
            case .badBefore: "before must be a photo id"
            case .badPage: "page must be a number, and relevance pages end at \(PhotoSearchQuery.relevanceWindow) photos"
            case .beforeWithRelevance: "before pages the newest order; relevance pages with page"
            case .pageWithNewest: "page pages the relevance order; newest pages with before"
            case .unknownExtras: StreamExtra.Unknown().message
            case .tooBroad: "Search is too broad: give longer or rarer words"
            case .broken: "Search is not available"
            }
        }

        public var kind: FailureKind {
            switch self {
            case .noWords, .tooManyWords, .queryTooLong, .unknownSort, .badCount, .badBefore, .badPage, .beforeWithRelevance,
                 .pageWithNewest, .unknownExtras: .invalidParameters
            case .tooBroad, .broken: .other
            }
        }
    }

    public static let defaultCount = 50
    public static let maxCount = 100
    public static let maxTerms = 6
    public static let maxQueryBytes = 200

    private let search: any PhotoSearch
    private let photos: any PhotoStore
    private let media: any MediaStore
    private let sessions: any SessionStore
    private let answers: AnswerCache<AnswerKey, [UInt8]>

    /// What an answer depends on: whose votes `myvote` shows (nil: no one's).
    private struct AnswerKey: KeptKey {
        var query: PhotoSearchQuery
        var extras: [StreamExtra]
        var viewer: Int64?

        var keptBytes: Int { query.terms.reduce(64) { $0 + $1.count + 16 } + extras.count * 8 }
    }

    public init(_ services: AppServices) {
        search = services.search
        photos = services.photos
        media = services.media
        sessions = services.sessions
        answers = AnswerCache(counters: services.counters, maxAgeMillis: Int64(services.policy.searchCacheMillis), clock: services.clock)
    }

    public func run(_ input: Input, in context: CommandContext) throws -> RenderedJSON {
        let viewer = input.extras.contains(.myvote) ? try SignedInUser.of(context, in: sessions) : nil
        do {
            let key = AnswerKey(query: input.query, extras: input.extras, viewer: viewer?.id)
            return RenderedJSON(json: try answers.answer(for: key) { (try answer(input, viewer: viewer), keep: true) })
        } catch PhotoSearchError.tooBroad {
            throw Failure.tooBroad
        } catch let error as any StoreError where !error.isUnavailable {
            // No index table (sql/migrations/005 not applied), or a broken one.
            Log.error("search: \(error)")
            throw Failure.broken
        }
    }

    private func answer(_ input: Input, viewer: SignedInUser?) throws -> [UInt8] {
        let found = try search.search(input.query)
        guard !input.extras.isEmpty else { return PhotoList(photos: found).json }
        let extras = try photos.extras(of: found.map(\.id), viewer: viewer?.id)
        let listed = found.map { ($0, extras[$0.id] ?? PhotoExtras()) }
        return PhotoListWithExtras(photos: try StreamExtra.completing(listed, for: input.extras, photos: photos, media: media),
                                   fields: input.extras, hasViewer: viewer != nil).json
    }
}
