/// The timelines: public (every photo, newest first: `stream`), home
/// (the people one follows and oneself: `feed`), a hashtag's and a list's
/// (we have neither: empty), each paged as Mastodon pages them
/// (`TimelinePage`). Photos only: comments are replies, shown in their
/// photo's context.
struct TimelineEndpoints: MastodonEndpoints {
    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        router.add(.get, "/api/v1/timelines/public", scope: nil) { call in
            let statuses = MastodonStatuses(call, api: api)
            let page = try TimelinePage(call.parameters)
            // Remote statuses: we have none.
            if call.parameters.bool("remote") == true { return statuses.page([], page) }
            return statuses.page(try statuses.statuses(try Self.stream(page, statuses: statuses)), page)
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
