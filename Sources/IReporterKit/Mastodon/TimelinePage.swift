/// Mastodon's paging of a list (a timeline, an account's statuses):
/// `max_id`, `since_id`, `min_id` and `limit` (`Limits`),
/// read as the declared commands' cursors (`before`, `since`, `after`,
/// `count`), and the `Link` header Mastodon sends with a page:
/// `<…?max_id=LAST>; rel="next", <…?min_id=FIRST>; rel="prev"`.
///
/// `since_id` asks for the newest statuses after it, `min_id` (which wins
/// over it, as in Mastodon) for the ones just after it: the page before.
struct TimelinePage {
    /// `limit`'s default and most, by what the list holds, as Mastodon has
    /// them: a client that stops paging at a page shorter than it asked
    /// for stopped after 40 accounts when it asked for 80.
    struct Limits {
        let byDefault: Int
        let most: Int
        static let statuses = Limits(byDefault: 20, most: 40)
        /// Accounts (followers, following, who liked) and notifications.
        static let accounts = Limits(byDefault: 40, most: 80)
    }

    let maxID: Int64?
    /// `min_id`, or else `since_id`.
    let sinceID: Int64?
    /// `min_id`: the statuses just after `sinceID`, not the newest.
    let fromSince: Bool
    let limit: Int
    /// `limit` as sent: the links carry it on.
    private let sentLimit: Int64?

    init(_ parameters: MastodonParameters, limits: Limits = .statuses) throws(MastodonError) {
        let maxID = try parameters.integer("max_id")
        self.maxID = maxID == 0 ? nil : maxID
        let minID = try parameters.integer("min_id")
        if let minID { sinceID = minID } else { sinceID = try parameters.integer("since_id") }
        fromSince = minID != nil
        sentLimit = try parameters.integer("limit")
        limit = sentLimit.map { Int(min(max($0, 1), Int64(limits.most))) } ?? limits.byDefault
    }

    /// Neither cursor: the newest, which `stream` answers from its cache.
    var isNewest: Bool { maxID == nil && sinceID == nil }

    /// The page as a store reads it.
    var pageCursor: PageCursor { PageCursor(since: sinceID ?? 0, before: maxID ?? .max, count: limit, fromSince: fromSince) }

    /// `arguments` with the page's cursor (`since` or `after`, `before`, `count`).
    func cursor(_ arguments: CommandArguments, count: Int? = nil) -> CommandArguments {
        var arguments = arguments
        if let maxID { arguments.fields["before"] = Array(String(maxID).utf8) }
        if let sinceID { arguments.fields[fromSince ? "after" : "since"] = Array(String(sinceID).utf8) }
        arguments.fields["count"] = Array(String(count ?? limit).utf8)
        return arguments
    }

    /// The `Link` header for a page of `ids` (newest first) at `path`; none
    /// for an empty page. `carrying`: the list's own parameters, which the
    /// next pages keep (masto.js asks the link's URL as it stands).
    func link(siteURL: String, path: String, ids: [Int64],
              carrying: [(name: String, values: [String])] = []) -> (name: String, value: String)? {
        guard let newest = ids.first, let oldest = ids.last else { return nil }
        let kept = carrying.flatMap { parameter in
            parameter.values.map { "\(URLEncoding.percentEncoded(parameter.name))=\(URLEncoding.percentEncoded($0))&" }
        }
        let base = (siteURL.hasSuffix("/") ? String(siteURL.dropLast()) : siteURL) + path + "?" + kept.joined()
            + (sentLimit == nil ? "" : "limit=\(limit)&")
        return ("Link", "<\(base)max_id=\(oldest)>; rel=\"next\", <\(base)min_id=\(newest)>; rel=\"prev\"")
    }
}
