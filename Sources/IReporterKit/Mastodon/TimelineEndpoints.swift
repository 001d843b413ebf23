/// The timelines: public (every photo, newest first: `stream`), home
/// (the people one follows and oneself: `feed`), a hashtag's and a list's
/// (we have neither: empty), each paged as Mastodon pages them
/// (`TimelinePage`). Photos only: comments are replies, shown in their
/// photo's context.
///
/// The public timeline's newest page is `stream`'s cached newest photos,
/// and its rendering (with the photos' descriptions) is kept too, under
/// `stream`'s rules (`AnswerCache`): an app polling it while nothing
/// changed costs no database query.
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
        router.add(.get, "/api/v1/timelines/public", scope: nil) { call in
            let statuses = MastodonStatuses(call, api: api)
            let page = try TimelinePage(call.parameters)
            // Remote statuses: we have none.
            if call.parameters.bool("remote") == true { return statuses.page([], page) }
            let rows = try Self.stream(page, statuses: statuses)
            guard page.isNewest else { return statuses.page(try statuses.statuses(rows), page) }
            let ids = rows.map(\.photo.id)
            let body = try newest.answer(for: NewestPage(viewer: call.grant?.userID, siteURL: call.request.siteURL, ids: ids)) {
                (StatusEntity.list(try statuses.statuses(rows), links: statuses.links), true)
            }
            return statuses.page(body: body, ids: ids, page)
        }
        router.add(.get, "/api/v1/timelines/home", scope: OAuthScope("read:statuses")) { call in
            _ = try call.user()
            let statuses = MastodonStatuses(call, api: api)
            let page = try TimelinePage(call.parameters)
            return statuses.page(try statuses.statuses(try statuses.photoRows("feed", page.cursor([:]))), page)
        }
        router.add(.get, "/api/v1/timelines/tag/:hashtag", scope: nil) { _ in .emptyList }
        router.add(.get, "/api/v1/timelines/list/:id", scope: OAuthScope("read:lists")) { _ in throw MastodonError.notFound }
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
