/// `search` on `photo_words` (sql/migrations/005): each term is a range of
/// the primary key (the words it starts), so no query reads the photos table
/// beyond the page it answers.
///
/// Newest first: the term with the fewest photos drives; for each word it
/// starts, its photos are read newest first from the key and stop at the
/// page's size, the other terms checked per photo on the `photo` key; the
/// words' lists are merged. A term that starts more than `maxWords` words
/// (one or two letters) is read as one range and sorted. Without terms, the
/// photos table itself newest first (by its author: migration 004).
public final class MariaDBPhotoSearch: PhotoSearch {
    let database: DatabaseConnection

    /// Words of one term merged list by list; more are read as one range.
    static let maxWords = 32

    public init(database: DatabaseConnection) { self.database = database }

    public func newestMatches(terms: [[UInt8]], userID: Int64?, before: Int64?, limit: Int) throws -> [PhotoRecord] {
        guard let (matches, values) = try matchingIDs(terms: terms, userID: userID, before: before, limit: limit) else {
            return []
        }
        let sql = "SELECT p.IdPhoto, p.title, l.IdUser, l.username FROM (\(matches)) m "
            + "JOIN photos p ON (p.IdPhoto = m.IdPhoto) JOIN login l ON (l.IdUser = p.IdUser) ORDER BY p.IdPhoto DESC LIMIT ?"
        return try database.query(sql, values + [.int(Int64(limit))]).compactMap(MariaDBPhotoStore.record)
    }

    public func countMatches(terms: [[UInt8]], userID: Int64?, cap: Int) throws -> Int {
        guard let (matches, values) = try matchingIDs(terms: terms, userID: userID, before: nil, limit: cap) else { return 0 }
        // Joined as the pages are: words whose photo went behind our back are not counted.
        return Int(try database.query("SELECT COUNT(*) AS n FROM (\(matches)) m JOIN photos p ON (p.IdPhoto = m.IdPhoto)",
                                      values).first?.int64("n") ?? 0)
    }

    /// A query of the newest matching IdPhotos (at most `limit`) and its
    /// values; nil when a term starts no word at all.
    private func matchingIDs(terms: [[UInt8]], userID: Int64?, before: Int64?, limit: Int) throws
        -> (String, [DatabaseValue])? {
        let below: DatabaseValue = .int(before ?? Int64.max)
        guard !terms.isEmpty else {
            let byUser = userID == nil ? "" : " AND p.IdUser = ?"
            return ("SELECT p.IdPhoto FROM photos p WHERE p.IdPhoto < ?\(byUser) ORDER BY p.IdPhoto DESC LIMIT ?",
                    [below] + (userID.map { [.int($0)] } ?? []) + [.int(Int64(limit))])
        }
        var words: [[[UInt8]]] = []
        for term in terms {
            let started = try database.query(
                "SELECT word FROM photo_words WHERE word >= ? AND word < ? GROUP BY word LIMIT \(Self.maxWords + 1)",
                Self.range(term)).compactMap { $0["word"] }
            if started.isEmpty { return nil }
            words.append(started)
        }
        let driver = terms.count == 1 ? 0 : try rarest(terms)
        let others = terms.indices.filter { $0 != driver }
        // Each other term is checked per photo read newest first, so that the
        // read stops at the page: a term that is one indexed word by a join
        // on the primary key (one lookup, at most one row); one that starts
        // several by a scalar subquery on the `photo` key (not EXISTS:
        // MariaDB turns an EXISTS into a semi-join that reads the other
        // term's whole range and sorts). STRAIGHT_JOIN keeps `d` first.
        var joins = ""
        var joinValues: [DatabaseValue] = []
        var filter = " AND d.IdPhoto < ?"
        var filterValues: [DatabaseValue] = [below]
        for (n, other) in others.enumerated() {
            if words[other].count == 1 {
                joins += " STRAIGHT_JOIN photo_words o\(n) ON (o\(n).word = ? AND o\(n).IdPhoto = d.IdPhoto)"
                joinValues.append(.bytes(words[other][0]))
            } else {
                filter += " AND (SELECT 1 FROM photo_words o WHERE o.IdPhoto = d.IdPhoto AND o.word >= ? AND o.word < ? LIMIT 1) IS NOT NULL"
                filterValues += Self.range(terms[other])
            }
        }
        if let userID {
            joins += " STRAIGHT_JOIN photos u ON (u.IdPhoto = d.IdPhoto AND u.IdUser = ?)"
            joinValues.append(.int(userID))
        }
        let count: DatabaseValue = .int(Int64(limit))
        guard words[driver].count <= Self.maxWords else {
            return ("SELECT DISTINCT d.IdPhoto FROM photo_words d\(joins) WHERE d.word >= ? AND d.word < ?\(filter) "
                        + "ORDER BY d.IdPhoto DESC LIMIT ?",
                    joinValues + Self.range(terms[driver]) + filterValues + [count])
        }
        // Padded to a power of two with the empty word (no such row), so
        // that few statement texts are prepared.
        var slots = 1
        while slots < words[driver].count { slots *= 2 }
        let padded = words[driver] + Array(repeating: [], count: slots - words[driver].count)
        if slots == 1 {
            return ("SELECT d.IdPhoto FROM photo_words d\(joins) WHERE d.word = ?\(filter) ORDER BY d.IdPhoto DESC LIMIT ?",
                    joinValues + [.bytes(padded[0])] + filterValues + [count])
        }
        let union = Array(repeating: "(SELECT d.IdPhoto FROM photo_words d\(joins) WHERE d.word = ?\(filter) ORDER BY d.IdPhoto DESC LIMIT ?)",
                          count: slots).joined(separator: " UNION ")
        return ("SELECT IdPhoto FROM (\(union)) w ORDER BY IdPhoto DESC LIMIT ?",
                padded.flatMap { joinValues + [.bytes($0)] + filterValues + [count] } + [count])
    }

    public func wholeWordCounts(photoIDs: [Int64], terms: [[UInt8]]) throws -> [Int64: Int] {
        var counts: [Int64: Int] = [:]
        for term in terms {
            // One statement per term, the photos in fixed-size groups.
            for group in stride(from: 0, to: photoIDs.count, by: 50).map({ photoIDs[$0..<min($0 + 50, photoIDs.count)] }) {
                let ids = Array(group) + Array(repeating: 0, count: 50 - group.count)
                let marks = Array(repeating: "?", count: 50).joined(separator: ", ")
                for row in try database.query("SELECT IdPhoto FROM photo_words WHERE word = ? AND IdPhoto IN (\(marks))",
                                              [.bytes(term)] + ids.map { .int($0) }) {
                    if let id = row.int64("IdPhoto") { counts[id, default: 0] += 1 }
                }
            }
        }
        return counts
    }

    /// The index of the term with the fewest photos, as the optimizer
    /// estimates them (EXPLAIN's rows: a few index dives, whatever the
    /// range's size; counting would read it). A wrong guess costs time,
    /// never a wrong answer.
    private func rarest(_ terms: [[UInt8]]) throws -> Int {
        var best = (index: 0, rows: Int64.max)
        for (index, term) in terms.enumerated() {
            let rows = try database.query("EXPLAIN SELECT 1 FROM photo_words WHERE word >= ? AND word < ?", Self.range(term))
            let estimate = rows.first?.int64("rows") ?? Int64.max
            if estimate < best.rows { best = (index, estimate) }
        }
        return best.index
    }

    /// The words that start with `term`: UTF-8 never holds the byte 0xFF.
    private static func range(_ term: [UInt8]) -> [DatabaseValue] {
        [.bytes(term), .bytes(term + [0xFF])]
    }
}
