/// `search` on `photo_words` (sql/migrations/005): each term is a range of
/// the primary key (the words it starts), so no query reads the photos table
/// beyond the page it answers.
///
/// One term, newest first: for each word it starts, its photos are read
/// newest first from the key and stop at the page's size; the words' lists
/// are merged in one statement. Several terms: the terms' lists are merged
/// in order (`PostingIntersection`), read chunk by chunk, so a pair of
/// common words that seldom meet costs two sequential reads, not a lookup
/// per photo. A term that starts more than `maxWords` words (one or two
/// letters) is not merged: it is checked on the photos the other terms
/// found (or, alone, read as one range and sorted). Several such terms and
/// no other: the rarest drives, the others checked per photo, unless that
/// would read more than `broadRowsBudget` rows; a merge reads at most
/// `maxRowsMerged` (beyond either: `PhotoSearchError.tooBroad`).
/// Without terms, the photos table itself newest first (by its author:
/// migration 004).
public final class MariaDBPhotoSearch: PhotoSearch {
    let database: any DatabaseReading

    /// Words of one term merged list by list; more are read as one range.
    static let maxWords = 32
    /// Photos per statement that checks or reads a list of ids (padded, so
    /// that few statement texts are prepared).
    static let idsPerStatement = 512

    /// Several broad terms and no other: the rarest's rows (the optimizer's
    /// estimate) times the terms, at most (at 1,000,000 photos "s t a b c d"
    /// read 1.3 s before it was refused).
    let broadRowsBudget: Int64

    /// Index rows one merge may read (a page, a relevance window, a
    /// count): beyond, the search is refused as too broad (at 1,000,000
    /// photos the benchmark's worst pair, "night city", reads 85,000;
    /// "s t a b c d", whose one-letter terms each start up to 32 common
    /// words, read 2-4 s before there was a limit).
    let maxRowsMerged: Int

    public init(database: any DatabaseReading, broadRowsBudget: Int64 = 100_000, maxRowsMerged: Int = 250_000) {
        self.database = database
        self.broadRowsBudget = broadRowsBudget
        self.maxRowsMerged = maxRowsMerged
    }

    public func newestMatches(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int) throws -> [PhotoRecord] {
        switch try plan(terms: terms, scope: scope, before: before, limit: limit) {
        case .nothing: return []
        case .statement(let matches, let values):
            let sql = "SELECT p.IdPhoto, p.title, l.IdUser, l.username FROM (\(matches)) m "
                + "JOIN photos p ON (p.IdPhoto = m.IdPhoto) JOIN login l ON (l.IdUser = p.IdUser) ORDER BY p.IdPhoto DESC LIMIT ?"
            return try database.query(sql, values + [.int(Int64(limit))]).compactMap(MariaDBPhotoStore.record)
        case .merged(let ids):
            return try records(ids)
        }
    }

    public func countMatches(terms: [[UInt8]], scope: PhotoScope, cap: Int) throws -> Int {
        switch try plan(terms: terms, scope: scope, before: nil, limit: cap, existing: true) {
        case .nothing: return 0
        case .statement(let matches, let values):
            // Joined as the pages are: words whose photo went behind our back are not counted.
            return Int(try database.query("SELECT COUNT(*) AS n FROM (\(matches)) m JOIN photos p ON (p.IdPhoto = m.IdPhoto)",
                                          values).first?.int64("n") ?? 0)
        case .merged(let ids):
            return ids.count
        }
    }

    /// How the newest matching IdPhotos (at most `limit`) are found.
    private enum Plan {
        /// A term starts no word at all.
        case nothing
        /// A query of them and its values.
        case statement(String, [DatabaseValue])
        /// Found by merging the terms' lists.
        case merged([Int64])
    }

    /// `existing`: merged ids are only those with a photos row (a count;
    /// a page's rows are read from the photos table anyway).
    private func plan(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int, existing: Bool = false) throws -> Plan {
        let below = before ?? Int64.max
        guard !terms.isEmpty else {
            let (uploaded, spanValues) = Self.uploadSpanJoin(scope, on: "p")
            let byUser = scope.userID == nil ? "" : " AND p.IdUser = ?"
            return .statement("SELECT p.IdPhoto FROM photos p\(uploaded) WHERE p.IdPhoto < ?\(byUser) ORDER BY p.IdPhoto DESC LIMIT ?",
                              spanValues + [.int(below)] + (scope.userID.map { [.int($0)] } ?? []) + [.int(Int64(limit))])
        }
        var words: [[[UInt8]]] = []
        for term in terms {
            let started = try database.query(
                "SELECT word FROM photo_words WHERE word >= ? AND word < ? GROUP BY word LIMIT \(Self.maxWords + 1)",
                Self.range(term)).compactMap { $0["word"] }
            if started.isEmpty { return .nothing }
            words.append(started)
        }
        let narrow = terms.indices.filter { words[$0].count <= Self.maxWords }
        let broad = terms.indices.filter { words[$0].count > Self.maxWords }
        guard terms.count > 1, !narrow.isEmpty else {
            var driver = 0
            if terms.count > 1 {
                let rarest = try rarest(terms)
                guard rarest.rows <= broadRowsBudget / Int64(terms.count) else { throw PhotoSearchError.tooBroad }
                driver = rarest.index
            }
            return try statement(terms: terms, words: words, driver: driver, scope: scope, below: below, limit: limit)
        }
        var merge = PostingIntersection(terms: narrow.map { words[$0] }, before: below, maxRowsRead: maxRowsMerged,
                                        read: newestOfWords)
        let ids = try merge.newest(limit: limit) { batch in
            var kept = batch
            for term in broad { kept = try having(kept, wordsStarting: terms[term]) }
            if scope != .everything || existing { kept = try photos(kept, in: scope) }
            return kept
        }
        return .merged(ids)
    }

    /// One term (or only broad ones): the driver's words newest first in
    /// one statement, the other terms checked per photo.
    private func statement(terms: [[UInt8]], words: [[[UInt8]]], driver: Int, scope: PhotoScope, below: Int64,
                           limit: Int) throws -> Plan {
        let others = terms.indices.filter { $0 != driver }
        // Each other term (broad: it starts more than maxWords words) is
        // checked per photo read newest first, by a scalar subquery on the
        // `photo` key (not EXISTS: MariaDB turns an EXISTS into a semi-join
        // that reads the other term's whole range and sorts).
        // STRAIGHT_JOIN keeps `d` first.
        var joins = ""
        var joinValues: [DatabaseValue] = []
        var filter = " AND d.IdPhoto < ?"
        var filterValues: [DatabaseValue] = [.int(below)]
        for other in others {
            filter += " AND (SELECT 1 FROM photo_words o WHERE o.IdPhoto = d.IdPhoto AND o.word >= ? AND o.word < ? LIMIT 1) IS NOT NULL"
            filterValues += Self.range(terms[other])
        }
        if let userID = scope.userID {
            joins += " STRAIGHT_JOIN photos u ON (u.IdPhoto = d.IdPhoto AND u.IdUser = ?)"
            joinValues.append(.int(userID))
        }
        let (uploaded, spanValues) = Self.uploadSpanJoin(scope, on: "d")
        joins += uploaded
        joinValues += spanValues
        let count: DatabaseValue = .int(Int64(limit))
        guard words[driver].count <= Self.maxWords else {
            return .statement("SELECT DISTINCT d.IdPhoto FROM photo_words d\(joins) WHERE d.word >= ? AND d.word < ?\(filter) "
                                  + "ORDER BY d.IdPhoto DESC LIMIT ?",
                              joinValues + Self.range(terms[driver]) + filterValues + [count])
        }
        let padded = Self.padded(words[driver], with: [])
        if padded.count == 1 {
            return .statement("SELECT d.IdPhoto FROM photo_words d\(joins) WHERE d.word = ?\(filter) ORDER BY d.IdPhoto DESC LIMIT ?",
                              joinValues + [.bytes(padded[0])] + filterValues + [count])
        }
        let union = Array(repeating: "(SELECT d.IdPhoto FROM photo_words d\(joins) WHERE d.word = ?\(filter) ORDER BY d.IdPhoto DESC LIMIT ?)",
                          count: padded.count).joined(separator: " UNION ")
        return .statement("SELECT IdPhoto FROM (\(union)) w ORDER BY IdPhoto DESC LIMIT ?",
                          padded.flatMap { joinValues + [.bytes($0)] + filterValues + [count] } + [count])
    }

    /// `PostingIntersection`'s reads: each word's photos below its mark,
    /// newest first, in one statement (a UNION ALL of ranges of the key,
    /// each stopping at `limit`; padded with the empty word, no such row).
    private func newestOfWords(_ words: [(word: [UInt8], below: Int64)], limit: Int) throws -> [[Int64]] {
        let padded = Self.padded(words, with: (word: [], below: 0))
        let sql = padded.indices.map {
            "(SELECT \($0) AS slot, IdPhoto FROM photo_words WHERE word = ? AND IdPhoto < ? ORDER BY IdPhoto DESC LIMIT ?)"
        }.joined(separator: " UNION ALL ")
        var lists = Array(repeating: [Int64](), count: words.count)
        // By position, parsed in place: tens of thousands of rows a query.
        for row in try database.query(sql, padded.flatMap { [.bytes($0.word), .int($0.below), .int(Int64(limit))] }) {
            guard let slot = Self.integer(row[0]), let id = Self.integer(row[1]), slot < lists.count else { continue }
            lists[Int(slot)].append(id)
        }
        // UNION ALL keeps each part's order, but that is not promised.
        return lists.map { $0.sorted(by: >) }
    }

    /// Those of `ids` (newest first) with a word that starts with `term`.
    private func having(_ ids: [Int64], wordsStarting term: [UInt8]) throws -> [Int64] {
        var found = Set<Int64>()
        for group in Self.groups(ids) {
            found.formUnion(try database.query(
                "SELECT DISTINCT IdPhoto FROM photo_words WHERE IdPhoto IN (\(Self.marks(group.count))) AND word >= ? AND word < ?",
                group.map { .int($0) } + Self.range(term)).compactMap { $0.int64("IdPhoto") })
        }
        return ids.filter(found.contains)
    }

    /// Those of `ids` that have a photos row in `scope`.
    private func photos(_ ids: [Int64], in scope: PhotoScope) throws -> [Int64] {
        var found = Set<Int64>()
        let (uploaded, spanValues) = Self.uploadSpanJoin(scope, on: "p")
        let byUser = scope.userID == nil ? "" : " AND p.IdUser = ?"
        for group in Self.groups(ids) {
            found.formUnion(try database.query(
                "SELECT p.IdPhoto FROM photos p\(uploaded) WHERE p.IdPhoto IN (\(Self.marks(group.count)))\(byUser)",
                spanValues + group.map { .int($0) } + (scope.userID.map { [.int($0)] } ?? []))
                .compactMap { $0.int64("IdPhoto") })
        }
        return ids.filter(found.contains)
    }

    /// A join keeping the photos (`alias`.IdPhoto) uploaded within the
    /// scope's span, and its values; none without a span. A photo without
    /// `photo_details` (its upload time not kept) has no row to join.
    private static func uploadSpanJoin(_ scope: PhotoScope, on alias: String) -> (String, [DatabaseValue]) {
        guard scope.hasUploadSpan else { return ("", []) }
        return (" STRAIGHT_JOIN photo_details t ON (t.IdPhoto = \(alias).IdPhoto AND t.created >= ? AND t.created <= ?)",
                [.int(scope.uploadedFrom ?? Int64.min), .int(scope.uploadedTo ?? Int64.max)])
    }

    /// The photos of `ids` with their authors, newest first.
    private func records(_ ids: [Int64]) throws -> [PhotoRecord] {
        var found: [PhotoRecord] = []
        for group in Self.groups(ids) {
            found += try database.query("SELECT p.IdPhoto, p.title, l.IdUser, l.username FROM photos p "
                                            + "JOIN login l ON (l.IdUser = p.IdUser) WHERE p.IdPhoto IN (\(Self.marks(group.count)))",
                                        group.map { .int($0) }).compactMap(MariaDBPhotoStore.record)
        }
        return found.sorted { $0.id > $1.id }
    }

    /// `ids` in groups of at most `idsPerStatement`, each padded with 0
    /// (no photo) to a power of two.
    private static func groups(_ ids: [Int64]) -> [[Int64]] {
        stride(from: 0, to: ids.count, by: idsPerStatement).map {
            padded(Array(ids[$0..<min($0 + idsPerStatement, ids.count)]), with: 0)
        }
    }

    /// `items` padded with `filler` to a power of two.
    private static func padded<Item>(_ items: [Item], with filler: Item) -> [Item] {
        var slots = 1
        while slots < items.count { slots *= 2 }
        return items + Array(repeating: filler, count: slots - items.count)
    }

    /// A non-negative decimal number's value.
    private static func integer(_ bytes: [UInt8]?) -> Int64? {
        guard let bytes, !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in bytes {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        return value
    }

    private static func marks(_ count: Int) -> String { Array(repeating: "?", count: count).joined(separator: ", ") }

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
    private func rarest(_ terms: [[UInt8]]) throws -> (index: Int, rows: Int64) {
        var best = (index: 0, rows: Int64.max)
        for (index, term) in terms.enumerated() {
            let rows = try database.query("EXPLAIN SELECT 1 FROM photo_words WHERE word >= ? AND word < ?", Self.range(term))
            let estimate = rows.first?.int64("rows") ?? Int64.max
            if estimate < best.rows { best = (index, estimate) }
        }
        return best
    }

    /// The words that start with `term`: UTF-8 never holds the byte 0xFF.
    private static func range(_ term: [UInt8]) -> [DatabaseValue] {
        [.bytes(term), .bytes(term + [0xFF])]
    }
}
