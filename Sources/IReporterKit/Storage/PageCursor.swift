/// Which rows a page holds: ids strictly between `since` and `before`,
/// newest first, at most `count`: the newest of them, or with `fromSince`
/// the ones just after `since`. Cursors, never OFFSET: a page deep in a
/// table costs an index range like the first one. (Flickr's page numbers
/// are the exception: `PhotoSearch.photos(in:oldestFirst:offset:limit:)`.)
public struct PageCursor: Sendable, Hashable {
    /// Only rows newer than this id (0: from the oldest).
    public var since: Int64
    /// Only rows older than this id (`Int64.max`: from the newest).
    public var before: Int64
    public var count: Int
    /// The `count` rows just newer than `since` (a page towards the newest:
    /// `after`, Mastodon's `min_id`) rather than the newest ones: read
    /// oldest first, still given newest first.
    public var fromSince: Bool

    public init(since: Int64 = 0, before: Int64 = .max, count: Int, fromSince: Bool = false) {
        self.since = since
        self.before = before
        self.count = count
        self.fromSince = fromSince
    }

    /// The one row with this id.
    public static func single(_ id: Int64) -> PageCursor {
        PageCursor(since: id == .min ? id : id - 1, before: id == .max ? id : id + 1, count: 1)
    }

    func contains(_ id: Int64) -> Bool { id > since && id < before }

    /// The page of `rows`: every row in the range, newest first.
    func pick<Rows: Collection>(_ rows: Rows) -> [Rows.Element] {
        fromSince ? Array(rows.suffix(count)) : Array(rows.prefix(count))
    }

    /// Rows read in the page's order (oldest first `fromSince`), newest first.
    func newestFirst<Element>(_ rows: [Element]) -> [Element] { fromSince ? rows.reversed() : rows }
}
