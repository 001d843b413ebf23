/// `/api/v1/accounts/:id/follow` and its kin: the follow graph through the
/// declared commands `follow`, `unfollow`, `followers`, `following` and
/// `person` (the same rules, limits and notifications as the form API).
/// We have no locked accounts: follow requests are always none.
struct FollowEndpoints: MastodonEndpoints {
    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        for command in ["follow", "unfollow"] {
            router.add(.post, "/api/v1/accounts/:id/\(command)", scope: OAuthScope("write:follows")) { call in
                let user = try call.user()
                let id = try call.id()
                guard let summary = try call.run(command, ["IdUser": String(id)]) as? PersonSummary else {
                    throw MastodonError.unavailable
                }
                return .json(RelationshipEntity(id: id, following: summary.counts.followedByViewer == true,
                                                followedBy: try api.services.follows.isFollowing(id, user.id)).json)
            }
        }
        for command in ["followers", "following"] {
            router.add(.get, "/api/v1/accounts/:id/\(command)", ifTokenSent: .readAccounts) { call in try Self.list(command, call, api: api) }
        }
        router.add(.get, "/api/v1/accounts/relationships", scope: OAuthScope("read:follows")) { call in
            let user = try call.user()
            let context = call.commandContext()
            var relationships: [RelationshipEntity] = []
            for id in Self.askedIDs(call) {
                // Mastodon leaves out the ids it has no account for.
                guard let summary = try Self.person(id, call, in: context) else { continue }
                relationships.append(RelationshipEntity(id: id, following: summary.counts.followedByViewer == true,
                                                        followedBy: try api.services.follows.isFollowing(id, user.id)))
            }
            return .json(RelationshipEntity.list(relationships))
        }
        // The profile's "followed by … you know": `familiar_followers` for each id asked.
        router.add(.get, "/api/v1/accounts/familiar_followers", scope: OAuthScope("read:follows")) { call in
            _ = try call.user()
            let links = MastodonLinks(siteURL: call.request.siteURL)
            let context = call.commandContext()
            var json = PHPJSONWriter()
            json.raw("[")
            var first = true
            for id in Self.askedIDs(call) {
                let arguments: CommandArguments = ["IdUser": String(id), "count": String(Self.maxFamiliarFollowers)]
                guard let list = try call.run("familiar_followers", arguments, in: context) as? FollowList else {
                    throw MastodonError.unavailable
                }
                if !first { json.raw(",") }
                first = false
                json.raw("{\"id\":")
                json.string(String(id))
                json.raw(",\"accounts\":")
                json.raw(json: AccountList.json(list.rows.map { AccountEntity(id: $0.userID, username: $0.username) }, links: links))
                json.raw("}")
            }
            json.raw("]")
            return .json(json.bytes)
        }
        router.add(.get, "/api/v1/follow_requests", scope: OAuthScope("read:follows")) { _ in .emptyList }
    }

    /// The most accounts one `relationships` request answers for (each costs its queries).
    static let maxRelationships = 40
    /// The familiar followers listed per account (apps show a few names).
    static let maxFamiliarFollowers = 40

    /// The accounts `id[]` names (those that are ids), at most `maxRelationships`.
    static func askedIDs(_ call: MastodonCall) -> [Int64] {
        call.parameters.strings("id").prefix(maxRelationships).compactMap { CommandParameter.wholeNumber(Array($0.utf8), in: 1...Int64.max) }
    }

    /// The account as `person` answers it for the call's user; nil when there is none.
    static func person(_ id: Int64, _ call: MastodonCall, in context: CommandContext) throws -> PersonSummary? {
        do {
            return try call.run("person", ["IdUser": String(id)], in: context) as? PersonSummary
        } catch where error.status == 404 {
            return nil
        }
    }

    /// An account's followers or following, newest follow first, paged by
    /// the follows' ids (`Link` as Mastodon sends it); 404 for no account.
    static func list(_ command: String, _ call: MastodonCall, api: MastodonAPI) throws -> MastodonAnswer {
        let statuses = MastodonStatuses(call, api: api)
        let id = try call.id()
        _ = try AccountEndpoints.account(id, statuses: statuses)
        let page = try TimelinePage(call.parameters, limits: .accounts)
        guard let list = try statuses.run(command, page.cursor(["IdUser": String(id)])) as? FollowList else {
            throw MastodonError.unavailable
        }
        let accounts = try AccountEndpoints.accounts(list.rows.map { ($0.userID, $0.username) }, statuses: statuses)
        var answer = MastodonAnswer.json(AccountList.json(accounts, links: statuses.links))
        if let link = page.link(siteURL: call.request.siteURL, path: call.request.path, ids: list.rows.map(\.id)) {
            answer.headers.append(link)
        }
        return answer
    }
}
