/// What a Mastodon server has and iReporter does not (lists, filters,
/// direct conversations, bookmarks, blocks and mutes, polls, trends,
/// announcements, custom emoji), answered as Pixelfed answers it: an empty
/// list where a client reads, 404 or 422 in Mastodon's shape where it would
/// make something. Clients then show an empty screen, not an error.
/// docs/API.md lists them.
struct UnsupportedEndpoints: MastodonEndpoints {
    /// Reading these gives `[]`, with the scope Mastodon asks for.
    static let emptyLists: [(path: String, scope: OAuthScope?)] = [
        ("/api/v1/lists", OAuthScope("read:lists")),
        ("/api/v1/accounts/:id/lists", OAuthScope("read:lists")),
        ("/api/v1/filters", OAuthScope("read:filters")),
        ("/api/v2/filters", OAuthScope("read:filters")),
        ("/api/v1/conversations", OAuthScope("read:statuses")),
        ("/api/v1/scheduled_statuses", OAuthScope("read:statuses")),
        ("/api/v1/bookmarks", OAuthScope("read:bookmarks")),
        ("/api/v1/blocks", OAuthScope("read:blocks")),
        ("/api/v1/mutes", OAuthScope("read:mutes")),
        ("/api/v1/domain_blocks", OAuthScope("read:blocks")),
        ("/api/v1/followed_tags", OAuthScope("read:follows")),
        ("/api/v1/endorsements", OAuthScope("read:accounts")),
        ("/api/v1/featured_tags", OAuthScope("read:accounts")),
        ("/api/v1/suggestions", .read),
        ("/api/v2/suggestions", .read),
        ("/api/v1/announcements", nil),
        ("/api/v1/custom_emojis", nil),
        ("/api/v1/trends", nil),
        ("/api/v1/trends/tags", nil),
        ("/api/v1/trends/statuses", nil),
        ("/api/v1/trends/links", nil),
    ]

    /// Making these is refused (422) with what is missing.
    static let refused: [(method: HTTPMethod, path: String, scope: OAuthScope?, what: String)] = [
        (.post, "/api/v1/lists", OAuthScope("write:lists"), "Lists are"),
        (.post, "/api/v1/filters", OAuthScope("write:filters"), "Filters are"),
        (.post, "/api/v2/filters", OAuthScope("write:filters"), "Filters are"),
        (.post, "/api/v1/accounts/:id/block", OAuthScope("write:blocks"), "Blocking is"),
        (.post, "/api/v1/accounts/:id/mute", OAuthScope("write:mutes"), "Muting is"),
        (.post, "/api/v1/domain_blocks", OAuthScope("write:blocks"), "Blocking is"),
        (.post, "/api/v1/reports", OAuthScope("write:reports"), "Reports are"),
        (.post, "/api/v1/accounts/:id/note", OAuthScope("write:accounts"), "Private notes on accounts are"),
        (.post, "/api/v1/accounts/:id/remove_from_followers", OAuthScope("write:follows"), "Removing a follower is"),
        // A 404 said "Record not found", which clients show as a missing account.
        (.patch, "/api/v1/accounts/update_credentials", OAuthScope("write:accounts"), "Editing a profile is"),
    ]

    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        for (path, scope) in Self.emptyLists {
            router.add(.get, path, scope: scope) { _ in .emptyList }
        }
        for (method, path, scope, what) in Self.refused {
            router.add(method, path, scope: scope) { _ in
                throw MastodonError(status: 422, message: "\(what) not supported by this server")
            }
        }
        // Public, as an account is (`register(in:)` of AccountEndpoints).
        router.add(.get, "/api/v1/accounts/:id/featured_tags", ifTokenSent: .readAccounts) { _ in .emptyList }
        // No poll is ever made, so none is found.
        router.add(.get, "/api/v1/polls/:id", ifTokenSent: .readStatuses) { _ in throw MastodonError.notFound }
        router.add(.post, "/api/v1/polls/:id/votes", scope: OAuthScope("write:statuses")) { _ in throw MastodonError.notFound }
        router.add(.get, "/api/v1/preferences", scope: OAuthScope("read:accounts")) { _ in
            .json(Array(Self.preferences.utf8))
        }
    }

    /// Every photo is public, shown as it is.
    static let preferences = """
        {"posting:default:visibility":"public","posting:default:sensitive":false,"posting:default:language":null,\
        "reading:expand:media":"default","reading:expand:spoilers":false}
        """
}
