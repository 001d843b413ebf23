/// Which rows a page holds: ids strictly between `since` and `before`,
/// newest first, at most `count`. Cursors, never OFFSET: a page deep in a
/// table costs an index range like the first one.
public struct PageCursor: Sendable, Equatable {
    /// Only rows newer than this id (0: from the oldest).
    public var since: Int64
    /// Only rows older than this id (`Int64.max`: from the newest).
    public var before: Int64
    public var count: Int

    public init(since: Int64 = 0, before: Int64 = .max, count: Int) {
        self.since = since
        self.before = before
        self.count = count
    }

    /// The one row with this id.
    public static func single(_ id: Int64) -> PageCursor {
        PageCursor(since: id == .min ? id : id - 1, before: id == .max ? id : id + 1, count: 1)
    }

    func contains(_ id: Int64) -> Bool { id > since && id < before }
}
