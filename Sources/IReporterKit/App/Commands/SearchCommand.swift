/// `search`: photos whose title or author's username has every word of `q`
/// (each word matching the start of one: "sun" finds "sunset"; case and
/// accents ignored), in the stream's shape. `sort` is `newest` (default;
/// the next page is `before` the last IdPhoto shown) or `relevance` (whole
/// words before prefixes among the newest 500 matches; the next page is
/// `page` + 1). `count` photos a page, 50 by default. `extras`: the
/// fields `stream` adds (`StreamExtra`), the same way.
public struct SearchCommand: Command {
    public struct Input: CommandInput {
        public let query: PhotoSearchQuery
        public let extras: [StreamExtra]

        public init(from parameters: any RequestParameters) throws(Failure) {
            let text = parameters.field("q") ?? []
            guard text.count <= SearchCommand.maxQueryBytes else { throw .queryTooLong }
            let terms = SearchWords.queryTerms(text)
            guard !terms.isEmpty else { throw .noWords }
            guard terms.count <= SearchCommand.maxTerms else { throw .tooManyWords }
            let order: PhotoSearchQuery.Order
            switch parameters.field("sort").map({ String(decoding: $0, as: UTF8.self) }) ?? "newest" {
            case "newest": order = .newest
            case "relevance": order = .relevance
            default: throw .unknownSort
            }
            let count = try Self.number(parameters, "count", in: 1...SearchCommand.maxCount, else: .badCount)
                ?? SearchCommand.defaultCount
            let before = try Self.number(parameters, "before", in: 1...Int(Int32.max), else: .badBefore)
            let page = try Self.number(parameters, "page", in: 1...PhotoSearchQuery.relevanceWindow, else: .badPage) ?? 1
            if order == .relevance, before != nil { throw .beforeWithRelevance }
            if order == .newest, page != 1 { throw .pageWithNewest }
            guard (page - 1) * count < PhotoSearchQuery.relevanceWindow else { throw .badPage }
            query = PhotoSearchQuery(terms: terms, order: order, before: before.map(Int64.init),
                                     offset: (page - 1) * count, limit: count)
            do {
                extras = try parameters.field("extras").flatMap { $0.isEmpty ? nil : try StreamExtra.list($0) } ?? []
            } catch {
                throw .unknownExtras
            }
        }

        /// A whole decimal number in `range`; nil when not sent.
        private static func number(_ parameters: any RequestParameters, _ name: String,
                                   in range: ClosedRange<Int>, else failure: Failure) throws(Failure) -> Int? {
            guard let bytes = parameters.field(name) else { return nil }
            guard bytes.count <= 10, !bytes.isEmpty, bytes.allSatisfy({ (0x30...0x39).contains($0) }),
                  let value = Int(String(decoding: bytes, as: UTF8.self)), range.contains(value) else { throw failure }
            return value
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
    }

    public static let defaultCount = 50
    public static let maxCount = 100
    public static let maxTerms = 6
    public static let maxQueryBytes = 200

    private let search: any PhotoSearch
    private let photos: any PhotoStore
    private let sessions: any SessionStore
    private let answers: AnswerCache<AnswerKey>

    /// What an answer depends on: whose votes `myvote` shows (nil: no one's).
    private struct AnswerKey: Hashable {
        var query: PhotoSearchQuery
        var extras: [StreamExtra]
        var viewer: Int64?
    }

    public init(_ services: AppServices) {
        search = services.search
        photos = services.photos
        sessions = services.sessions
        answers = AnswerCache(counters: services.counters, maxAgeMillis: services.policy.searchCacheMillis, clock: services.clock)
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
        return PhotoListWithExtras(photos: StreamExtra.needSecrets(input.extras) ? try photos.withSecrets(listed) : listed,
                                   fields: input.extras, hasViewer: viewer != nil).json
    }
}
