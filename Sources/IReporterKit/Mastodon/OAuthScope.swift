/// One of Mastodon's OAuth scopes: a top-level one (`read`, `write`,
/// `follow`, `push`, `profile`) or a sub-scope (`read:statuses`). A
/// top-level scope covers its sub-scopes; `follow`, the old scope, covers
/// the follow graph's (`read:follows`, `write:follows`, blocks, mutes).
public struct OAuthScope: Hashable, Sendable, CustomStringConvertible {
    public let name: String

    static let topLevel: Set<String> = ["read", "write", "follow", "push", "profile"]
    static let subScopes: Set<String> = [
        "read:accounts", "read:blocks", "read:bookmarks", "read:favourites", "read:filters", "read:follows",
        "read:lists", "read:mutes", "read:notifications", "read:search", "read:statuses",
        "write:accounts", "write:blocks", "write:bookmarks", "write:conversations", "write:favourites", "write:filters",
        "write:follows", "write:lists", "write:media", "write:mutes", "write:notifications", "write:reports",
        "write:statuses",
    ]
    private static let coveredByFollow: Set<String> = [
        "read:follows", "write:follows", "read:blocks", "write:blocks", "read:mutes", "write:mutes",
    ]

    /// A scope Mastodon knows; nil for anything else.
    public init?(_ name: String) {
        guard Self.topLevel.contains(name) || Self.subScopes.contains(name) else { return nil }
        self.name = name
    }

    public var description: String { name }

    /// Whether a token granted this scope may do what `required` guards.
    public func covers(_ required: OAuthScope) -> Bool {
        if self == required { return true }
        if name == "follow" { return Self.coveredByFollow.contains(required.name) }
        return required.name.hasPrefix(name + ":")
    }

    public static let read = OAuthScope("read")!
    public static let write = OAuthScope("write")!
    public static let follow = OAuthScope("follow")!
}

/// The scopes of an app or a token: a space-separated list, as OAuth sends it.
public struct OAuthScopes: Equatable, Sendable, CustomStringConvertible {
    public let scopes: [OAuthScope]

    public init(_ scopes: [OAuthScope]) {
        var seen = Set<OAuthScope>()
        self.scopes = scopes.filter { seen.insert($0).inserted }
    }

    /// Parses `read write:media …`; nil when a word is no scope. An empty
    /// text is `read`, Mastodon's default.
    public init?(parsing text: String) {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "+" })
        if words.isEmpty {
            self.init([.read])
            return
        }
        var scopes: [OAuthScope] = []
        for word in words {
            guard let scope = OAuthScope(String(word)) else { return nil }
            scopes.append(scope)
        }
        self.init(scopes)
    }

    public var description: String { scopes.map(\.name).joined(separator: " ") }

    /// Whether one of them covers `required`.
    public func cover(_ required: OAuthScope) -> Bool { scopes.contains { $0.covers(required) } }
}

/// What a valid access token allows: whose it is (nil: the app's own
/// token, client credentials), which app holds it, and its scopes.
public struct AccessGrant: Sendable {
    public let userID: Int64?
    public let appID: Int64
    public let scopes: OAuthScopes

    public init(userID: Int64?, appID: Int64, scopes: OAuthScopes) {
        (self.userID, self.appID, self.scopes) = (userID, appID, scopes)
    }
}

/// Looks access tokens up (by their hash: the tokens themselves are never stored).
public protocol AccessTokens {
    /// The grant of a token that is valid now; nil for one that is unknown,
    /// revoked or expired.
    func grant(forToken token: [UInt8]) throws -> AccessGrant?
}
