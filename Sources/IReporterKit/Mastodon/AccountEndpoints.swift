/// `/api/v1/accounts`: our users as Mastodon's accounts, with their counts
/// (`person`: photos, followers, following), their photos (`stream`), and
/// search (`search` for statuses; accounts by their exact username).
struct AccountEndpoints: MastodonEndpoints {
    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        router.add(.get, "/api/v1/accounts/verify_credentials", scope: .profile) { call in
            let user = try call.user()
            let statuses = MastodonStatuses(call, api: api)
            return .json(try Self.account(user.id, statuses: statuses).json(links: statuses.links, withSource: true))
        }
        router.add(.get, "/api/v1/accounts/lookup", ifTokenSent: .readAccounts) { call in
            let statuses = MastodonStatuses(call, api: api)
            guard let acct = call.parameters.bytes("acct"),
                  let id = try Self.userID(named: acct, siteURL: call.request.siteURL, services: api.services) else {
                throw MastodonError.notFound
            }
            return .json(try Self.account(id, statuses: statuses).json(links: statuses.links))
        }
        router.add(.get, "/api/v1/accounts/search", scope: OAuthScope("read:accounts")) { call in
            let statuses = MastodonStatuses(call, api: api)
            return .json(AccountList.json(try Self.accounts(matching: call.parameters, statuses: statuses), links: statuses.links))
        }
        router.add(.get, "/api/v1/accounts/:id", ifTokenSent: .readAccounts) { call in
            let statuses = MastodonStatuses(call, api: api)
            return .json(try Self.account(try call.id(), statuses: statuses).json(links: statuses.links))
        }
        router.add(.get, "/api/v1/accounts/:id/statuses", ifTokenSent: .readStatuses) { call in
            let statuses = MastodonStatuses(call, api: api)
            let id = try call.id()
            _ = try Self.account(id, statuses: statuses)
            let page = try TimelinePage(call.parameters)
            // No pins, no tags: those pages are empty. Every status has its photo and none is a reply.
            if call.parameters.bool("pinned") == true || call.parameters.bytes("tagged") != nil { return statuses.page([], page) }
            return statuses.page(statuses.statuses(try TimelineEndpoints.stream(page, userID: id, statuses: statuses)), page)
        }
        router.add(.get, "/api/v2/search", ifTokenSent: .readSearch) { call in
            let statuses = MastodonStatuses(call, api: api)
            let type = call.parameters.string("type")
            let (wantsAccounts, wantsStatuses) = (type == nil || type == "accounts", type == nil || type == "statuses")
            var (accounts, found) = try Self.linked(call.parameters, statuses: statuses)
                ?? (wantsAccounts ? try Self.accounts(matching: call.parameters, statuses: statuses) : [],
                    wantsStatuses ? try Self.photos(matching: call.parameters, statuses: statuses) : [])
            if !wantsAccounts { accounts = [] }
            if !wantsStatuses { found = [] }
            var json = PHPJSONWriter()
            json.raw("{\"accounts\":")
            json.raw(json: AccountList.json(accounts, links: statuses.links))
            json.raw(",\"statuses\":")
            json.raw(json: statuses.list(found))
            json.raw(",\"hashtags\":[]}")
            return .json(json.bytes)
        }
    }

    /// The account with its counts (`person`); 404 when there is none.
    static func account(_ id: Int64, statuses: MastodonStatuses) throws -> AccountEntity {
        guard let summary = try statuses.run("person", ["IdUser": String(id)]) as? PersonSummary else { throw MastodonError.notFound }
        return account(summary)
    }

    static func account(_ summary: PersonSummary) -> AccountEntity {
        AccountEntity(person: summary.person, followersCount: summary.counts.followers, followingCount: summary.counts.following)
    }

    /// The accounts of a list (followers, following, who likes a photo) with
    /// their counts and join date, which apps show under each name (Ice
    /// Cubes: "N followers"); one `person` each, a page being at most 40.
    /// One gone meanwhile is listed by its id and name alone.
    static func accounts(_ rows: [(userID: Int64, username: [UInt8]?)], statuses: MastodonStatuses) throws -> [AccountEntity] {
        try rows.map { row in
            try FollowEndpoints.person(row.userID, statuses.call, in: statuses.context).map(account)
                ?? AccountEntity(id: row.userID, username: row.username)
        }
    }

    /// The account `acct` names (`name`, `@name` or `name@` this site's
    /// host), as logging in finds it. Any other host's `name` is someone
    /// elsewhere, not ours of that name. A username may hold an `@` itself
    /// (the 2012 app took any), so the whole is looked up first.
    static func userID(named acct: [UInt8], siteURL: String, services: AppServices) throws -> Int64? {
        let name = acct.first == UInt8(ascii: "@") ? Array(acct.dropFirst()) : acct
        if let id = try services.users.accounts(typed: name).first?.id { return id }
        let ourHost = Array("@\(InstanceEndpoints.domain(siteURL))".utf8).map(asciiLowercased)
        guard name.count > ourHost.count, name.suffix(ourHost.count).map(asciiLowercased) == ourHost else { return nil }
        return try services.users.accounts(typed: Array(name.dropLast(ourHost.count))).first?.id
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// `q`'s account: the one with that exact username (no prefix search
    /// here), on the first page (`offset` 0) only.
    static func accounts(matching parameters: MastodonParameters, statuses: MastodonStatuses) throws -> [AccountEntity] {
        guard let query = parameters.bytes("q"), try offset(parameters) == 0,
              let id = try userID(named: query, siteURL: statuses.call.request.siteURL, services: statuses.services) else { return [] }
        return [try account(id, statuses: statuses)]
    }

    /// What `q` names when it is a link to this site's photo, comment or
    /// person (`MastodonLinks.target`), as Mastodon finds its own statuses
    /// and accounts by their URL: that one alone, none when it is gone or
    /// hidden from the viewer, on the first page only; nil for any other `q`.
    static func linked(_ parameters: MastodonParameters, statuses: MastodonStatuses)
        throws -> (accounts: [AccountEntity], statuses: [StatusEntity])? {
        guard let query = parameters.string("q"), let target = statuses.links.target(of: query) else { return nil }
        guard try offset(parameters) == 0 else { return ([], []) }
        switch target {
        case .account(let id):
            return (try FollowEndpoints.person(id, statuses.call, in: statuses.context).map { [account($0)] } ?? [], [])
        case .photo(let id):
            return ([], try statuses.photo(id).map { [$0] } ?? [])
        case .comment(let id, let photoID):
            guard let comment = try statuses.comment(id), comment.photoID == photoID else { return ([], []) }
            return ([], [comment])
        }
    }

    /// How deep `offset` pages a search (Tusky pages so, until a page is empty).
    static let maxOffset = PhotoSearchQuery.relevanceWindow

    /// `offset`: results skipped (Mastodon's paging of a search besides `max_id`).
    private static func offset(_ parameters: MastodonParameters) throws(MastodonError) -> Int {
        Int(min(max(try parameters.integer("offset") ?? 0, 0), Int64(maxOffset)))
    }

    /// `search`'s photos for `q`, newest first (`max_id` its `before`,
    /// `limit` its `count`), past the first `offset` (read a page of the
    /// command at a time, up to `maxOffset`: beyond it, none).
    static func photos(matching parameters: MastodonParameters, statuses: MastodonStatuses) throws -> [StatusEntity] {
        guard let query = parameters.bytes("q") else { return [] }
        let page = try TimelinePage(parameters)
        var skip = try offset(parameters)
        guard skip < maxOffset else { return [] }
        var before = page.maxID
        while true {
            let count = min(SearchCommand.maxCount, skip + page.limit)
            var arguments = CommandArguments(fields: ["q": query, "count": Array(String(count).utf8)])
            if let before { arguments.fields["before"] = Array(String(before).utf8) }
            if let account = try parameters.integer("account_id") { arguments.fields["IdUser"] = Array(String(account).utf8) }
            // A page skipped whole needs its ids alone, not the statuses' extras.
            let rows = skip >= count ? try StreamRows.decode(try statuses.run("search", arguments).json)
                                     : try statuses.photoRows("search", arguments)
            guard skip >= rows.count else { return statuses.statuses(Array(rows.dropFirst(skip).prefix(page.limit))) }
            guard rows.count == count, let last = rows.last else { return [] }
            skip -= rows.count
            before = last.photo.id
        }
    }
}
