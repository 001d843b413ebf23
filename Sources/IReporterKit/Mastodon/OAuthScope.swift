/// One of Mastodon's OAuth scopes (docs.joinmastodon.org/api/oauth-scopes):
/// `read`, `write`, `push`, `profile`, the deprecated `follow`, and the
/// sub-scopes `read:<resource>` and `write:<resource>`. Only the names
/// Mastodon defines parse: a client's typo is refused as `invalid_scope`
/// instead of being granted nothing. (The `admin:` scopes are not ours: no
/// moderation API here.)
public struct OAuthScope: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let name: String

    public init?(_ name: some StringProtocol) {
        guard Self.known.contains(String(name)) else { return nil }
        self.name = String(name)
    }

    private init(known name: String) { self.name = name }

    public var description: String { name }
    public static func < (a: OAuthScope, b: OAuthScope) -> Bool { a.name < b.name }

    public static let read = OAuthScope(known: "read")
    public static let write = OAuthScope(known: "write")
    public static let follow = OAuthScope(known: "follow")
    public static let push = OAuthScope(known: "push")
    /// Who the token's user is (`verify_credentials`), nothing else.
    public static let profile = OAuthScope(known: "profile")

    public static let readAccounts = OAuthScope(known: "read:accounts")
    public static let readBlocks = OAuthScope(known: "read:blocks")
    public static let readFavourites = OAuthScope(known: "read:favourites")
    public static let readFollows = OAuthScope(known: "read:follows")
    public static let readNotifications = OAuthScope(known: "read:notifications")
    public static let readSearch = OAuthScope(known: "read:search")
    public static let readStatuses = OAuthScope(known: "read:statuses")
    public static let writeAccounts = OAuthScope(known: "write:accounts")
    public static let writeFavourites = OAuthScope(known: "write:favourites")
    public static let writeFollows = OAuthScope(known: "write:follows")
    public static let writeMedia = OAuthScope(known: "write:media")
    public static let writeNotifications = OAuthScope(known: "write:notifications")
    public static let writeStatuses = OAuthScope(known: "write:statuses")

    static let readResources = ["accounts", "blocks", "bookmarks", "favourites", "filters", "follows", "lists", "mutes",
                                "notifications", "search", "statuses"]
    static let writeResources = ["accounts", "blocks", "bookmarks", "conversations", "favourites", "filters", "follows",
                                 "lists", "media", "mutes", "notifications", "reports", "statuses"]
    /// What the deprecated `follow` stands for (Mastodon's own expansion).
    static let followMeans: Set<String> = ["read:blocks", "write:blocks", "read:follows", "write:follows",
                                           "read:mutes", "write:mutes"]

    /// Every scope, in the order the metadata lists them.
    public static let all: [OAuthScope] = (["read", "write", "follow", "push", "profile"]
        + readResources.map { "read:\($0)" } + writeResources.map { "write:\($0)" }).map(OAuthScope.init(known:))
    private static let known = Set(all.map(\.name))

    /// `read` of `read:statuses`; nil for a top-level scope.
    var parent: OAuthScope? {
        guard let colon = name.firstIndex(of: ":") else { return nil }
        return OAuthScope(known: String(name[..<colon]))
    }
}

/// A token's or an app's scopes: what it may do. `read` covers every
/// `read:…`, `follow` what Mastodon expands it to, and `profile` (who the
/// user is) is covered by `read:accounts` and so by `read`: the endpoint
/// declares the narrowest scope it needs, the grant covers it or not.
public struct OAuthScopes: Hashable, Sendable, CustomStringConvertible {
    public let scopes: Set<OAuthScope>

    public init(_ scopes: some Sequence<OAuthScope>) { self.scopes = Set(scopes) }

    /// Space-separated names (RFC 6749 §3.3; `+` arrives decoded as a space);
    /// nil if one is not a scope. Empty text: nil too, the caller's default
    /// applies (Mastodon's is `read`).
    public init?(parsing text: some StringProtocol) {
        var scopes: Set<OAuthScope> = []
        for name in text.split(whereSeparator: { $0 == " " || $0 == "+" }) {
            guard let scope = OAuthScope(name) else { return nil }
            scopes.insert(scope)
        }
        guard !scopes.isEmpty else { return nil }
        self.scopes = scopes
    }

    /// Mastodon's default when an app or a token request names none.
    public static let defaultScopes = OAuthScopes([.read])

    /// Sorted, space-separated: how they are stored and answered.
    public var description: String { scopes.sorted().map(\.name).joined(separator: " ") }

    /// Whether these scopes allow what needs `scope`.
    public func covers(_ scope: OAuthScope) -> Bool {
        if scopes.contains(scope) { return true }
        if let parent = scope.parent, scopes.contains(parent) { return true }
        if scopes.contains(.follow), OAuthScope.followMeans.contains(scope.name) { return true }
        if scope == .profile { return covers(.readAccounts) }
        return false
    }

    /// Whether every one of `other` is covered: a token asked of an app may
    /// only have what the app registered.
    public func covers(all other: OAuthScopes) -> Bool { other.scopes.allSatisfy(covers) }
}
