/// `/api/v1/notifications`: the declared `notifications` and `dismiss`,
/// as Mastodon's Notifications. Of Mastodon's types we have `favourite`,
/// `follow` and `mention` (a comment on your photo); `types[]` and
/// `exclude_types[]` choose among them (any other type has none).
struct NotificationEndpoints: MastodonEndpoints {
    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        router.add(.get, "/api/v1/notifications", scope: OAuthScope("read:notifications")) { call in
            _ = try call.user()
            let statuses = MastodonStatuses(call, api: api)
            let kinds = Self.kinds(call.parameters)
            guard !kinds.isEmpty else { return .emptyList }
            let page = try TimelinePage(call.parameters, limits: .accounts)
            let types = kinds.map(\.rawValue).joined(separator: ",")
            var arguments = page.cursor(["types": types])
            if let account = try call.parameters.integer("account_id") {
                guard account > 0 else { return .emptyList }
                arguments.fields["IdUser"] = Array(String(account).utf8)
            }
            let found = try Self.notifications(arguments, statuses: statuses)
            var answer = MastodonAnswer.json(NotificationEntity.list(found, links: statuses.links))
            let filters = ["types", "exclude_types"].map { (name: "\($0)[]", values: call.parameters.strings($0)) }
                + [(name: "account_id", values: call.parameters.string("account_id").map { [$0] } ?? [])]
            if let link = page.link(siteURL: call.request.siteURL, path: call.request.path, ids: found.map(\.record.id),
                                    carrying: filters) {
                answer.headers.append(link)
            }
            return answer
        }
        router.add(.get, "/api/v1/notifications/:id", scope: OAuthScope("read:notifications")) { call in
            _ = try call.user()
            let statuses = MastodonStatuses(call, api: api)
            let one = PageCursor.single(try call.id())
            let cursor: CommandArguments = ["since": String(one.since), "before": String(one.before), "count": "1"]
            guard let found = try Self.notifications(cursor, statuses: statuses).first else { throw MastodonError.notFound }
            return .json(found.json(links: statuses.links))
        }
        router.add(.post, "/api/v1/notifications/:id/dismiss", scope: OAuthScope("write:notifications")) { call in
            _ = try call.user()
            _ = try call.run("dismiss", ["id": String(try call.id())])
            return .emptyObject
        }
        router.add(.post, "/api/v1/notifications/clear", scope: OAuthScope("write:notifications")) { call in
            _ = try call.user()
            _ = try call.run("dismiss", ["all": DismissCommand.Everything.yes.rawValue])
            return .emptyObject
        }
    }

    /// The kinds `types[]` asks for (all when absent) less `exclude_types[]`.
    static func kinds(_ parameters: MastodonParameters) -> [NotificationKind] {
        let asked = parameters.strings("types")
        let excluded = Set(parameters.strings("exclude_types"))
        return NotificationKind.allCases.filter { (asked.isEmpty || asked.contains($0.rawValue)) && !excluded.contains($0.rawValue) }
    }

    /// A page of `notifications`, each with its status.
    static func notifications(_ arguments: CommandArguments, statuses: MastodonStatuses) throws -> [NotificationEntity] {
        guard let list = try statuses.run("notifications", arguments) as? NotificationList else { throw MastodonError.unavailable }
        return try list.notifications.map { record in
            let status: StatusEntity? = switch record.event.kind {
            case .favourite: try record.event.photoID.flatMap(statuses.photo)
            case .mention: try record.event.commentID.flatMap(statuses.comment)
            case .follow: nil
            }
            return NotificationEntity(record: record, status: status)
        }
    }
}
