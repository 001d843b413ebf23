/// A connection's prepared statements, keyed by their SQL, at most
/// `capacity` of them: making room drops the least recently used, whose
/// server-side statement closes when its last reference goes. Every
/// statement held counts against the server-wide `max_prepared_stmt_count`,
/// shared by every connection and application on the server, so a
/// connection holds a constant number whatever its clients send.
/// Generic over what it holds, so that its order can be tested without a server.
struct StatementCache<Statement> {
    let capacity: Int
    private var entries: [String: (statement: Statement, lastUse: UInt64)] = [:]
    /// Counts uses; an entry's `lastUse` says how recent its last one was.
    private var uses: UInt64 = 0

    init(capacity: Int) {
        precondition(capacity > 0, "a statement cache holds at least one statement")
        self.capacity = capacity
    }

    var count: Int { entries.count }
    var isFull: Bool { entries.count >= capacity }

    /// The statement for `sql`, now the most recently used; nil if not held.
    mutating func statement(for sql: String) -> Statement? {
        guard let entry = entries[sql] else { return nil }
        uses += 1
        entries[sql] = (entry.statement, uses)
        return entry.statement
    }

    /// Holds `statement` for `sql` as the most recently used, after dropping
    /// the least recently used one if the cache is full; returns the one
    /// dropped. (`DatabaseConnection` makes room before it prepares, so
    /// that the server never holds one more.)
    @discardableResult
    mutating func insert(_ statement: Statement, for sql: String) -> Statement? {
        var evicted: Statement?
        if entries[sql] == nil, isFull { evicted = removeLeastRecentlyUsed() }
        uses += 1
        entries[sql] = (statement, uses)
        return evicted
    }

    /// Drops the statement used longest ago (a linear scan: the cache is
    /// small and this runs once per statement prepared, next to a round
    /// trip to the server).
    @discardableResult
    mutating func removeLeastRecentlyUsed() -> Statement? {
        guard let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) else { return nil }
        entries[oldest.key] = nil
        return oldest.value.statement
    }

    mutating func removeAll() { entries.removeAll() }
}
