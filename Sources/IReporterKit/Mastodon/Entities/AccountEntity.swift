/// Mastodon's Account of one of our users: the username is the
/// account's `username`, `acct` and `display_name` (all local), its
/// photos are its statuses. What we do not keep (a note, a header, a
/// locked account, profile fields) is the empty or default value.
public struct AccountEntity: Sendable, Equatable {
    public let id: Int64
    /// Nil when the account is gone (a comment or photo kept without its author).
    public let username: [UInt8]?
    public var statusesCount: Int64
    public var followersCount: Int64
    public var followingCount: Int64
    /// Unix seconds of its first upload whose time was kept.
    public var firstUpload: Int64?
    /// When it registered (migration 016).
    public var registered: Int64?
    /// Its newest upload whose time was kept: `last_status_at`, that day; nil: null.
    public var lastUpload: Int64?

    public init(id: Int64, username: [UInt8]?, statusesCount: Int64 = 0, followersCount: Int64 = 0, followingCount: Int64 = 0,
                firstUpload: Int64? = nil, lastUpload: Int64? = nil, registered: Int64? = nil) {
        self.id = id
        self.username = username
        self.statusesCount = statusesCount
        self.followersCount = followersCount
        self.followingCount = followingCount
        self.firstUpload = firstUpload
        self.lastUpload = lastUpload
        self.registered = registered
    }

    public init(person: PersonRecord, followersCount: Int64 = 0, followingCount: Int64 = 0) {
        self.init(id: person.id, username: person.username, statusesCount: person.photoCount, followersCount: followersCount,
                  followingCount: followingCount, firstUpload: person.firstUpload, lastUpload: person.lastUpload,
                  registered: person.registered)
    }

    /// Mastodon's account creation, as that day: when it registered, or
    /// (registered before this was kept) its first upload whose time was
    /// kept, the earlier of the two; without either, the epoch.
    var createdAt: Int64 { [registered, firstUpload].compactMap { $0 }.min() ?? 0 }

    /// A gone account's name: something a client can show and link (its
    /// id), where Mastodon's clients expect a non-empty `acct`.
    static func goneName(_ id: Int64) -> [UInt8] { Array("#\(id)".utf8) }

    /// `withSource`: `verify_credentials`' account, with its `source`.
    public func write(into json: inout PHPJSONWriter, links: MastodonLinks, withSource: Bool = false) {
        let name = username ?? Self.goneName(id)
        json.raw("{")
        json.member("id", id: id)
        json.member("username", text: name)
        json.member("acct", text: name)
        json.member("display_name", text: name)
        json.member("locked", false)
        json.member("bot", false)
        json.member("discoverable", true)
        json.member("indexable", true)
        json.member("group", false)
        json.member("noindex", false)
        json.member("hide_collections", false)
        json.member("created_at", time: MastodonTime.day(of: createdAt))
        json.member("note", "")
        json.member("url", links.accountPage(id))
        json.member("uri", links.accountPage(id))
        json.member("avatar", links.defaultAvatar)
        json.member("avatar_static", links.defaultAvatar)
        json.member("header", links.defaultHeader)
        json.member("header_static", links.defaultHeader)
        json.member("followers_count", followersCount)
        json.member("following_count", followingCount)
        json.member("statuses_count", statusesCount)
        json.member("last_status_at", lastUpload.map(MastodonTime.date))
        json.emptyList("emojis")
        json.emptyList("fields")
        json.emptyList("roles")
        if withSource {
            json.name("source")
            json.raw(#"{"privacy":"public","sensitive":false,"language":null,"note":"","fields":[],"follow_requests_count":0}"#)
        }
        json.raw("}")
    }

    public func json(links: MastodonLinks, withSource: Bool = false) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 700)
        write(into: &json, links: links, withSource: withSource)
        return json.bytes
    }
}
