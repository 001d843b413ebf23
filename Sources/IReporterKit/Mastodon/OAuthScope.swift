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

    /// Whether a token granted this scope alone may do what `required` guards.
    public func covers(_ required: OAuthScope) -> Bool { OAuthScopes([self]).covers(required) }

    /// `read` of `read:statuses`; nil for a top-level scope.
    var parent: OAuthScope? {
        guard let colon = name.firstIndex(of: ":") else { return nil }
        return OAuthScope(known: String(name[..<colon]))
    }
}

/// A token's or an app's scopes, in the order they were given (answers
/// repeat a client's list as it sent it), each once; equal when they hold
/// the same scopes. `read` covers every `read:…`, `follow` what Mastodon
/// expands it to, and `profile` (who the user is) is covered by
/// `read:accounts` and so by `read`: an endpoint declares the narrowest
/// scope it needs, and the grant covers it or not.
public struct OAuthScopes: Equatable, Sendable, CustomStringConvertible {
    public let scopes: [OAuthScope]

    public init(_ scopes: some Sequence<OAuthScope>) {
        var seen = Set<OAuthScope>()
        self.scopes = scopes.filter { seen.insert($0).inserted }
    }

    /// Space-separated names (RFC 6749 §3.3; `+` too, as some clients send
    /// it); nil if one is not a scope. An empty text is `read`, Mastodon's
    /// default.
    public init?(parsing text: some StringProtocol) {
        var scopes: [OAuthScope] = []
        for name in text.split(whereSeparator: { $0 == " " || $0 == "+" }) {
            guard let scope = OAuthScope(name) else { return nil }
            scopes.append(scope)
        }
        self.init(scopes.isEmpty ? [.read] : scopes)
    }

    /// Mastodon's default when an app or a token request names none.
    public static let defaultScopes = OAuthScopes([.read])

    /// Space-separated: how they are stored and answered.
    public var description: String { scopes.map(\.name).joined(separator: " ") }

    public static func == (a: OAuthScopes, b: OAuthScopes) -> Bool { Set(a.scopes) == Set(b.scopes) }

    /// These and `other`'s, these first.
    public func union(_ other: OAuthScopes) -> OAuthScopes { OAuthScopes(scopes + other.scopes) }

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
