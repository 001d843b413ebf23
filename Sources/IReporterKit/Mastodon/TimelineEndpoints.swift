/// The timelines: public (every photo, newest first: `stream`), home
/// (the people one follows and oneself: `feed`), a hashtag's and a list's
/// (we have neither: empty), each paged as Mastodon pages them
/// (`TimelinePage`). Photos only: comments are replies, shown in their
/// photo's context.
///
/// The newest page of the public timeline is `stream`'s cached newest
/// photos, the home timeline's `feed`'s cached newest page, each with the
/// photos' descriptions (`StreamRows.extras`); the rendering of either is
/// kept too, under `stream`'s rules (`AnswerCache`), and shared by the
/// host's workers: an app polling them while nothing changed costs no
/// database query, a refresh costs the command's queries once a
/// `stream_cache_ms` whichever workers answer, and a page rendered again
/// costs none.
struct TimelineEndpoints: MastodonEndpoints {
    /// One rendering of the newest page: for whom (their favourites), at
    /// which address, how long, of which command answer (as the command
    /// rendered it, kept by the command while nothing changed: it is not
    /// read back for a page kept here).
    struct NewestPage: KeptKey {
        let viewer: Int64?
        let siteURL: String
        let limit: Int
        let answer: [UInt8]

        /// The answer's bytes hashed in one pass: `[UInt8]`'s own hashing
        /// feeds the hasher a byte at a time, which on a 10 KB answer cost
        /// more than the rest of a kept page's request.
        func hash(into hasher: inout Hasher) {
            hasher.combine(viewer)
            hasher.combine(siteURL)
            hasher.combine(limit)
            answer.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        var keptBytes: Int { siteURL.utf8.count + answer.count + 32 }

        /// Its name in the host's table (`SharedAnswerTable`), with the
        /// answer's SHA-256: a page is never found for another answer, and
        /// the page and its name fit in a slot.
        var sharedKey: [UInt8] {
            Array("page \(viewer ?? 0) \(limit) \(siteURL)\n".utf8) + Digest.sha256.digest(answer)
        }
    }

    /// A page as rendered, with the ids its `Link` header names.
    struct RenderedPage: SharedAnswer {
        let body: [UInt8]
        let ids: [Int64]
        var keptBytes: Int { body.count + ids.count * 8 }

        init(body: [UInt8], ids: [Int64]) {
            self.body = body
            self.ids = ids
        }

        /// The ids' count, the ids (8 bytes each, little-endian), the body.
        var sharedBytes: [UInt8] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(8 + ids.count * 8 + body.count)
            for word in [Int64(ids.count)] + ids { withUnsafeBytes(of: word.littleEndian) { bytes += $0 } }
            return bytes + body
        }

        init?(sharedBytes bytes: [UInt8]) {
            func word(_ index: Int) -> Int64 {
                Int64(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: index * 8, as: Int64.self) })
            }
            guard bytes.count >= 8 else { return nil }
            let count = Int(word(0))
            guard count >= 0, bytes.count >= 8 + count * 8 else { return nil }
            ids = (0..<count).map { word(1 + $0) }
            body = Array(bytes[(8 + count * 8)...])
        }
    }

    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        let services = api.services
        let newest = AnswerCache<NewestPage, RenderedPage>(counters: services.counters,
                                                           maxAgeMillis: Int64(services.policy.streamCacheMillis), clock: services.clock,
                                                           table: services.sharedAnswers, sharedKey: \.sharedKey)
        let newestHome = AnswerCache<NewestPage, RenderedPage>(counters: services.counters,
                                                               maxAgeMillis: Int64(services.policy.streamCacheMillis),
                                                               clock: services.clock, table: services.sharedAnswers,
                                                               sharedKey: \.sharedKey)
        router.add(.get, "/api/v1/timelines/public", ifTokenSent: .readStatuses) { call in
            let statuses = MastodonStatuses(call, api: api)
            let page = try TimelinePage(call.parameters)
            // Remote statuses: we have none.
            if call.parameters.bool("remote") == true { return statuses.page([], page) }
            guard page.isNewest, page.limit <= StreamCommand.length else {
                return statuses.page(statuses.statuses(try Self.stream(page, statuses: statuses)), page)
            }
            // `stream`'s newest 50 from its cache, of which the page shows `limit`.
            return try Self.newestPage(of: statuses.photoAnswer("stream", [:]), page, statuses: statuses, kept: newest)
        }
        router.add(.get, "/api/v1/timelines/home", scope: OAuthScope("read:statuses")) { call in
            _ = try call.user()
            let statuses = MastodonStatuses(call, api: api)
            let page = try TimelinePage(call.parameters)
            let arguments = page.cursor([:])
            guard page.isNewest else { return statuses.page(statuses.statuses(try statuses.photoRows("feed", arguments)), page) }
            return try Self.newestPage(of: statuses.photoAnswer("feed", arguments), page, statuses: statuses, kept: newestHome)
        }
        router.add(.get, "/api/v1/timelines/tag/:hashtag", ifTokenSent: .readStatuses) { _ in .emptyList }
        router.add(.get, "/api/v1/timelines/list/:id", scope: OAuthScope("read:lists")) { _ in throw MastodonError.notFound }
    }

    /// The newest page: the first `limit` photos of `answer`, rendered once
    /// for each viewer while nothing changed (`kept`).
    private static func newestPage(of answer: [UInt8], _ page: TimelinePage, statuses: MastodonStatuses,
                                   kept: AnswerCache<NewestPage, RenderedPage>) throws -> MastodonAnswer {
        let key = NewestPage(viewer: statuses.call.grant?.userID, siteURL: statuses.call.request.siteURL, limit: page.limit,
                             answer: answer)
        let rendered = try kept.answer(for: key) {
            let rows = Array(try StreamRows.decode(answer).prefix(page.limit))
            return (RenderedPage(body: statuses.list(statuses.statuses(rows)), ids: rows.map(\.photo.id)),
                    true)
        }
        return statuses.page(body: rendered.body, ids: rendered.ids, page)
    }

    /// A page of `stream` (one person's with `userID`) at the page's cursor.
    static func stream(_ page: TimelinePage, userID: Int64? = nil,
                       statuses: MastodonStatuses) throws -> [(photo: PhotoRecord, extras: PhotoExtras)] {
        var arguments: CommandArguments = [:]
        if let userID { arguments.fields["IdUser"] = Array(String(userID).utf8) }
        return try statuses.photoRows("stream", page.cursor(arguments))
    }
}
