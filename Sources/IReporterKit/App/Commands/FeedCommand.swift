/// `feed`: the signed-in user's home: the photos of the people they follow
/// and their own, newest first, paged with `since`, `before` and `count`
/// (50 by default) and with `stream`'s `extras`, in `stream`'s shape.
///
/// Each worker keeps its recent answers (`AnswerCache`, by viewer, page
/// and fields) under `stream`'s discipline: served only for the stream
/// generation they were made under, which every upload, deletion, vote,
/// comment, follow and unfollow bumps, and for at most `stream_cache_ms`,
/// and shares them with the host's other workers (`SharedAnswerTable`): a
/// phone polling its unchanged home costs no query, and one query a
/// `stream_cache_ms` whichever workers answer it.
public struct FeedCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "feed", "Photos of the people you follow and your own, newest first.",
        parameters: CommandParameter.cursor + [.extras()], readOnly: true, result: .photos)

    public struct Input: CommandInput {
        public let page: PageCursor
        public let extras: [StreamExtra]

        public init(from parameters: any RequestParameters) throws {
            page = try ParameterRules.cursor(parameters) ?? PageCursor(count: StreamCommand.length)
            extras = try CommandParameter.extras().list(parameters)
        }

        init(page: PageCursor, extras: [StreamExtra]) { (self.page, self.extras) = (page, extras) }
    }

    /// One viewer's question.
    struct Question: KeptKey {
        var viewer: Int64
        var page: PageCursor
        var extras: [StreamExtra]

        var keptBytes: Int { 40 + extras.count * 8 }

        /// Its name in the host's table: the page's `since` written `after`
        /// when the page is the one just after it.
        var sharedKey: [UInt8] {
            Array(("feed \(viewer) \(page.fromSince ? "after" : "since") \(page.since) \(page.before) \(page.count) "
                   + extras.map(\.rawValue).joined(separator: ",")).utf8)
        }
    }

    private let graph: any FollowStore
    private let pages: PhotoPageByID
    private let cache: AnswerCache<Question, [UInt8]>

    public init(_ services: AppServices) {
        graph = services.follows
        pages = PhotoPageByID(photos: services.photos, media: services.media)
        cache = AnswerCache(counters: services.counters, maxAgeMillis: Int64(services.policy.streamCacheMillis),
                            clock: services.clock, table: services.sharedAnswers, sharedKey: \.sharedKey)
    }

    /// Makes again, ahead of the requests, the answer the host's table
    /// keeps under `name` (a `Question`'s `sharedKey`; any other name is left alone).
    func remake(named name: [UInt8]) throws {
        guard let question = Question(sharedKey: name) else { return }
        try cache.remake(question) { try answer(Input(page: question.page, extras: question.extras), viewer: question.viewer) }
    }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> RenderedJSON {
        let question = Question(viewer: user.id, page: input.page, extras: input.extras)
        return RenderedJSON(json: try cache.answer(for: question) { (try answer(input, viewer: user.id), true) })
    }

    /// The page's ids from the graph, then their rows (and extras) by id.
    private func answer(_ input: Input, viewer: Int64) throws -> [UInt8] {
        try pages.render(try graph.feed(of: viewer, page: input.page), extras: input.extras, viewer: viewer)
    }
}

/// In an extension: the question keeps its memberwise initializer.
extension FeedCommand.Question {
    /// The question a name in the host's table stands for; nil: not a `feed` question's.
    init?(sharedKey: [UInt8]) {
        let words = String(decoding: sharedKey, as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 7, words[0] == "feed", let viewer = Int64(words[1]), ["since", "after"].contains(words[2]),
              let since = Int64(words[3]), let before = Int64(words[4]), let count = Int(words[5]) else { return nil }
        let extras = words[6].isEmpty ? [] : words[6].split(separator: ",").map { StreamExtra(rawValue: String($0)) }
        guard extras.allSatisfy({ $0 != nil }) else { return nil }
        self.init(viewer: viewer, page: PageCursor(since: since, before: before, count: count, fromSince: words[2] == "after"),
                  extras: extras.compactMap { $0 })
    }

    /// The names of `feed`'s questions in the host's table start so.
    static let sharedKeyPrefix = Array("feed ".utf8)
}
