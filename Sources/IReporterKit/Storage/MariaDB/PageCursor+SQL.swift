extension PageCursor {
    /// The ORDER BY direction that reads the page: newest first, or oldest
    /// first `fromSince` (`newestFirst` turns those rows around).
    var sqlOrder: String { fromSince ? "ASC" : "DESC" }

    /// `since`, `before` and `count`, as the page queries take them.
    var sqlArguments: [DatabaseValue] { [.int(since), .int(before), .int(Int64(count))] }
}
