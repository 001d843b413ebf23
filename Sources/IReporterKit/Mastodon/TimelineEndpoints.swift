/// The timelines: public (every photo, newest first: `stream`), home
/// (the people one follows and oneself: `feed`), a hashtag's and a list's
/// (we have neither: empty), each paged as Mastodon pages them
/// (`TimelinePage`). Photos only: comments are replies, shown in their
/// photo's context.
///
/// The newest page of the public timeline is `stream`'s cached newest
/// photos, the home timeline's `feed`'s cached newest page; the rendering
/// of either (with the photos' descriptions) is kept too, under `stream`'s
/// rules (`AnswerCache`): an app polling them while nothing changed costs
/// no database query.
struct TimelineEndpoints: MastodonEndpoints {
    /// One rendering of the newest page: for whom (their favourites), at
    /// which address, of which photos.
    struct NewestPage: Hashable {
        let viewer: Int64?
        let siteURL: String
        let ids: [Int64]
    }

    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        let services = api.services
        let newest = AnswerCache<NewestPage>(counters: services.counters, maxAgeMillis: Int64(services.policy.streamCacheMillis),
                                             clock: services.clock)
        let newestHome = AnswerCache<NewestPage>(counters: services.counters,
                                                 maxAgeMillis: Int64(services.policy.streamCacheMillis), clock: services.clock)
        router.add(.get, "/api/v1/timelines/public", scope: nil) { call in
            let statuses = MastodonStatuses(call, api: api)
            let page = try TimelinePage(call.parameters)
            // Remote statuses: we have none.
            if call.parameters.bool("remote") == true { return statuses.page([], page) }
            return try Self.page(of: try Self.stream(page, statuses: statuses), page, statuses: statuses, newest: newest)
        }
        router.add(.get, "/api/v1/timelines/home", scope: OAuthScope("read:statuses")) { call in
            _ = try call.user()
            let statuses = MastodonStatuses(call, api: api)
            let page = try TimelinePage(call.parameters)
            return try Self.page(of: try statuses.photoRows("feed", page.cursor([:])), page, statuses: statuses, newest: newestHome)
        }
        router.add(.get, "/api/v1/timelines/tag/:hashtag", scope: nil) { _ in .emptyList }
        router.add(.get, "/api/v1/timelines/list/:id", scope: OAuthScope("read:lists")) { _ in throw MastodonError.notFound }
    }

    /// The page of `rows`; the newest as kept in `newest` (by viewer, site and photos).
    private static func page(of rows: [(photo: PhotoRecord, extras: PhotoExtras)], _ page: TimelinePage,
                             statuses: MastodonStatuses, newest: AnswerCache<NewestPage>) throws -> MastodonAnswer {
        guard page.isNewest else { return statuses.page(try statuses.statuses(rows), page) }
        let ids = rows.map(\.photo.id)
        let body = try newest.answer(for: NewestPage(viewer: statuses.call.grant?.userID, siteURL: statuses.call.request.siteURL,
                                                     ids: ids)) {
            (StatusEntity.list(try statuses.statuses(rows), links: statuses.links), true)
        }
        return statuses.page(body: body, ids: ids, page)
    }

    /// A page of `stream` (one person's with `userID`); the newest from its
    /// cache (its 50 newest photos, answered from memory while nothing changed).
    static func stream(_ page: TimelinePage, userID: Int64? = nil,
                       statuses: MastodonStatuses) throws -> [(photo: PhotoRecord, extras: PhotoExtras)] {
        var arguments: CommandArguments = [:]
        if let userID { arguments.fields["IdUser"] = Array(String(userID).utf8) }
        guard page.isNewest, userID == nil, page.limit <= StreamCommand.length else {
            return try statuses.photoRows("stream", page.cursor(arguments))
        }
        return Array(try statuses.photoRows("stream", arguments).prefix(page.limit))
    }
}
