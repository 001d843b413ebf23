/// `search` and Flickr's lists on `photo_words` (sql/migrations/005) and
/// `photo_details` (003, its upload-time index 008). Every question reads
/// index ranges newest first (without words, oldest first too) and stops
/// once its page is full or once it has read `rowsBudget` index rows more
/// than the photos it answers (docs/SECURITY.md "What an anonymous query
/// reads"): no shape of query reads a table at large, however rare its
/// matches. (An account's list without words pages by OFFSET in the
/// author's key, up to `FlickrAPI.maxAccountPhotos` entries.)
///
/// - No words: the photos table's primary key newest first (by author: the
///   key of migration 004); within a span of upload times, the upload-time
///   key of migration 008 newest upload first (an author with fewer photos
///   than the budget: their photos, sorted). Oldest first
///   (`photos(in:oldestFirst:…)`): the same keys from their other end.
/// - One word that starts at most `maxWords` indexed words, nothing else:
///   each word's photos newest first, each read stopping at the page's size,
///   merged in one statement.
/// - Otherwise the terms' lists are merged in order (`PostingIntersection`),
///   chunk by chunk, so a pair of common words that seldom meet costs two
///   sequential reads, not a lookup per photo. A term that starts more than
///   `maxWords` words (one or two letters) is not merged: it is checked on
///   the photos the others found; with only such terms, the `photo` key is
///   walked newest first and each photo's words checked.
/// - Words and an author with fewer photos than the budget (a Flickr
///   `user_id`): their photos newest first, each checked for the words.
/// - Words and a span of upload times holding fewer photos than any word:
///   the span's photos as without words, each checked for the words.
/// - The budget spent before the page is full: `PhotoSearchError.tooBroad`
///   (a count answers what it found so far).
public final class MariaDBPhotoSearch: PhotoSearch {
    let database: any DatabaseReading

    /// Words of one term merged list by list; more are read otherwise.
    static let maxWords = 32
    /// Photos per statement that checks or reads a list of ids (padded, so
    /// that few statement texts are prepared).
    static let idsPerStatement = 512
    /// Rows of a walk's first read (a walk of the `photo` key needs more than
    /// one photo's words: at most about 100 for a title of 100 bytes).
    static let firstWalkChunk = 256
    /// The upload-time index (sql/migrations/008).
    static let uploadTimeIndex = "created_IdPhoto"

    /// Index rows a question may read beyond the photos it asks for (a
    /// page, a relevance window, a Flickr `total`): at 1,000,000 photos the
    /// benchmark's pair "night city" read 85,000 for an empty page (0.15 s)
    /// before there was this bound (bench/results/2026-12-02-scans).
    let rowsBudget: Int

    public init(database: any DatabaseReading, rowsBudget: Int = 20_000) {
        self.database = database
        self.rowsBudget = rowsBudget
    }

    public func newestMatches(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int) throws -> [PhotoRecord] {
        switch try plan(terms: terms, scope: scope, before: before, limit: limit) {
        case .nothing: return []
        case .statement(let matches, let values):
            let sql = "SELECT p.IdPhoto, p.title, l.IdUser, l.username FROM (\(matches)) m "
                + "JOIN photos p ON (p.IdPhoto = m.IdPhoto) JOIN login l ON (l.IdUser = p.IdUser) ORDER BY p.IdPhoto DESC LIMIT ?"
            return try database.query(sql, values + [.int(Int64(limit))]).compactMap(MariaDBPhotoStore.record)
        case .found(let ids, let exhausted):
            // The budget spent before the page was full: the page would
            // silently miss older matches.
            if exhausted { throw PhotoSearchError.tooBroad }
            return try records(ids)
        }
    }

    /// Without a span the `photos` table's key (by author: 004's) from
    /// either end, the offset skipped in the key (index entries, not rows:
    /// an account's list pages far); within one the upload-time key from
    /// the span's either end, within the budget.
    public func photos(in scope: PhotoScope, oldestFirst: Bool, offset: Int, limit: Int) throws -> [PhotoRecord] {
        guard !scope.hasUploadSpan else {
            let (ids, exhausted) = try uploaded(within: scope, below: Int64.max, limit: offset + limit,
                                                allowance: offset + limit + rowsBudget, oldestFirst: oldestFirst)
            if exhausted { throw PhotoSearchError.tooBroad }
            return try records(Array(ids.dropFirst(offset)))
        }
        let byUser = scope.userID == nil ? "" : " WHERE p.IdUser = ?"
        let order = oldestFirst ? "" : " DESC"
        let sql = "SELECT p.IdPhoto, p.title, l.IdUser, l.username FROM (SELECT p.IdPhoto FROM photos p\(byUser) "
            + "ORDER BY p.IdPhoto\(order) LIMIT ? OFFSET ?) m JOIN photos p ON (p.IdPhoto = m.IdPhoto) JOIN login l ON (l.IdUser = p.IdUser) "
            + "ORDER BY p.IdPhoto\(order)"
        return try database.query(sql, (scope.userID.map { [.int($0)] } ?? []) + [.int(Int64(limit)), .int(Int64(offset))])
            .compactMap(MariaDBPhotoStore.record)
    }

    /// Counted up to `cap`, or as far as the budget reads (then fewer).
    public func countMatches(terms: [[UInt8]], scope: PhotoScope, cap: Int) throws -> Int {
        switch try plan(terms: terms, scope: scope, before: nil, limit: cap, existing: true) {
        case .nothing: return 0
        case .statement(let matches, let values):
            // Words joined as the pages are: words whose photo went behind our
            // back are not counted. Without words the ids are the photos' own
            // key: counted there, no row read.
            let joined = terms.isEmpty ? "" : " JOIN photos p ON (p.IdPhoto = m.IdPhoto)"
            return Int(try database.query("SELECT COUNT(*) AS n FROM (\(matches)) m\(joined)", values).first?.int64("n") ?? 0)
        case .found(let ids, _):
            return ids.count
        }
    }

    /// How the newest matching IdPhotos (at most `limit`) are found.
    private enum Plan {
        /// A term starts no word at all.
        case nothing
        /// A query of them (at most `limit` rows read from each of its
        /// ranges) and its values.
        case statement(String, [DatabaseValue])
        /// Found, in the page's order; `exhausted`: the budget was spent
        /// before `limit` were.
        case found([Int64], exhausted: Bool)
    }

    /// `existing`: found ids are only those with a photos row (a count;
    /// a page's rows are read from the photos table anyway).
    private func plan(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int, existing: Bool = false) throws -> Plan {
        let below = before ?? Int64.max
        let allowance = limit + rowsBudget
        guard !terms.isEmpty else {
            if scope.hasUploadSpan {
                let (ids, exhausted) = try uploaded(within: scope, below: below, limit: limit, allowance: allowance)
                return .found(ids, exhausted: exhausted)
            }
            let byUser = scope.userID == nil ? "" : " AND p.IdUser = ?"
            return .statement("SELECT p.IdPhoto FROM photos p WHERE p.IdPhoto < ?\(byUser) ORDER BY p.IdPhoto DESC LIMIT ?",
                              [.int(below)] + (scope.userID.map { [.int($0)] } ?? []) + [.int(Int64(limit))])
        }
        var words: [[[UInt8]]] = []
        for term in terms {
            let started = try self.words(startingWith: term)
            if started.isEmpty { return .nothing }
            words.append(started)
        }
        let narrow = terms.indices.filter { words[$0].count <= Self.maxWords }
        let broad = terms.indices.filter { words[$0].count > Self.maxWords }
        if narrow.isEmpty {
            let (ids, exhausted) = try walkingPhotos(terms: terms, scope: scope, below: below, limit: limit,
                                                     allowance: allowance, existing: existing)
            return .found(ids, exhausted: exhausted)
        }
        if let userID = scope.userID, let theirs = try photos(of: userID, below: below, atMost: allowance) {
            // An author with few photos (a Flickr `user_id`): theirs, newest
            // first, each checked for the words and the span.
            var found: [Int64] = []
            for start in stride(from: 0, to: theirs.count, by: Self.idsPerStatement) where found.count < limit {
                var kept = Array(theirs[start..<min(start + Self.idsPerStatement, theirs.count)])
                for term in terms { kept = try having(kept, wordsStarting: term) }
                if scope.hasUploadSpan { kept = try photos(kept, in: scope) }
                found += kept.prefix(limit - found.count)
            }
            return .found(found, exhausted: false)
        }
        if scope.hasUploadSpan, try spanIsNarrower(scope, than: terms) {
            // A span of few photos (a date long ago) among words of many:
            // the span's photos newest upload first, each checked for the words.
            let (ids, exhausted) = try uploaded(within: scope, below: below, limit: limit, allowance: allowance) { batch in
                try terms.reduce(batch) { kept, term in try having(kept, wordsStarting: term) }
            }
            return .found(ids, exhausted: exhausted)
        }
        if terms.count == 1, scope == .everything, words[0].count * limit <= allowance {
            return statement(words: words[0], below: below, limit: limit)
        }
        var merge = PostingIntersection(terms: narrow.map { words[$0] }, before: below, maxRowsRead: allowance,
                                        read: newestOfWords)
        let ids = try merge.newest(limit: limit) { batch in
            var kept = batch
            for term in broad { kept = try having(kept, wordsStarting: terms[term]) }
            if scope != .everything || existing { kept = try photos(kept, in: scope) }
            return kept
        }
        return .found(ids, exhausted: merge.exhausted)
    }

    /// The indexed words that start with `term`, at most `maxWords` + 1:
    /// one dive of the primary key each. (A GROUP BY is a loose index scan
    /// only when the optimizer guesses so: at 1,000,000 photos it read the
    /// 78,000 rows of "night" to find one word.)
    private func words(startingWith term: [UInt8]) throws -> [[UInt8]] {
        let end: DatabaseValue = .bytes(term + [0xFF])
        var words: [[UInt8]] = []
        var next = try database.query("SELECT word FROM photo_words WHERE word >= ? AND word < ? ORDER BY word LIMIT 1",
                                      [.bytes(term), end]).first?["word"]
        while let word = next {
            words.append(word)
            if words.count > Self.maxWords { break }
            next = try database.query("SELECT word FROM photo_words WHERE word > ? AND word < ? ORDER BY word LIMIT 1",
                                      [.bytes(word), end]).first?["word"]
        }
        return words
    }

    /// One term, no scope: its words' photos newest first in one statement,
    /// each word's read stopping at `limit`.
    private func statement(words: [[UInt8]], below: Int64, limit: Int) -> Plan {
        let count: DatabaseValue = .int(Int64(limit))
        let padded = Self.padded(words, with: [])
        if padded.count == 1 {
            return .statement("SELECT IdPhoto FROM photo_words WHERE word = ? AND IdPhoto < ? ORDER BY IdPhoto DESC LIMIT ?",
                              [.bytes(padded[0]), .int(below), count])
        }
        let union = Array(repeating: "(SELECT IdPhoto FROM photo_words WHERE word = ? AND IdPhoto < ? ORDER BY IdPhoto DESC LIMIT ?)",
                          count: padded.count).joined(separator: " UNION ")
        return .statement("SELECT IdPhoto FROM (\(union)) w ORDER BY IdPhoto DESC LIMIT ?",
                          padded.flatMap { [.bytes($0), .int(below), count] } + [count])
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

    /// Only terms that each start more than `maxWords` words: the `photo`
    /// key (IdPhoto, word) newest first, in chunks, each photo's words
    /// checked against every term; at most `allowance` rows.
    private func walkingPhotos(terms: [[UInt8]], scope: PhotoScope, below: Int64, limit: Int, allowance: Int,
                               existing: Bool) throws -> (ids: [Int64], exhausted: Bool) {
        var found: [Int64] = []
        var (cursor, read, chunk) = (below, 0, Self.firstWalkChunk)
        while found.count < limit {
            let want = min(chunk, allowance - read)
            guard want > 0 else { return (found, true) }
            var photosRead: [(id: Int64, words: [[UInt8]])] = []
            let rows = try database.query("SELECT IdPhoto, word FROM photo_words FORCE INDEX (photo) WHERE IdPhoto < ? "
                                              + "ORDER BY IdPhoto DESC, word DESC LIMIT ?", [.int(cursor), .int(Int64(want))])
            for row in rows {
                guard let id = Self.integer(row[0]), let word = row[1] else { continue }
                if photosRead.last?.id == id { photosRead[photosRead.count - 1].words.append(word) } else { photosRead.append((id, [word])) }
            }
            read += rows.count
            let ended = rows.count < want
            // A full read may have cut the last photo's words: it is read again with the next.
            if !ended { photosRead.removeLast() }
            guard let last = photosRead.last else { return (found, !ended) }
            var matching = photosRead.filter { photo in terms.allSatisfy { term in photo.words.contains { $0.starts(with: term) } } }
                .map(\.id)
            if scope != .everything || existing { matching = try photos(matching, in: scope) }
            found += matching.prefix(limit - found.count)
            if ended { break }
            (cursor, chunk) = (last.id, min(chunk * 4, PostingIntersection.maxChunk))
        }
        return (found, false)
    }

    /// An author's photos below `below`, newest first, when they have at
    /// most `atMost` (`IdUser_IdPhoto` of migration 004, LIMIT `atMost` + 1).
    private func photos(of userID: Int64, below: Int64, atMost: Int) throws -> [Int64]? {
        let theirs = try database.query("SELECT IdPhoto FROM photos WHERE IdUser = ? AND IdPhoto < ? ORDER BY IdPhoto DESC LIMIT ?",
                                        [.int(userID), .int(below), .int(Int64(atMost + 1))]).compactMap { $0.int64("IdPhoto") }
        return theirs.count <= atMost ? theirs : nil
    }

    /// Whether `scope`'s span of upload times holds fewer photos than the
    /// rarest term's words, as the optimizer estimates both (EXPLAIN's rows:
    /// a few index dives whatever the ranges' sizes). False without the
    /// upload-time index. A wrong guess costs reads within the budget,
    /// never a wrong answer.
    private func spanIsNarrower(_ scope: PhotoScope, than terms: [[UInt8]]) throws -> Bool {
        let spanRows: Int64
        do {
            spanRows = try database.query("EXPLAIN SELECT 1 FROM photo_details FORCE INDEX (\(Self.uploadTimeIndex)) "
                                              + "WHERE created >= ? AND created <= ?",
                                          [.int(scope.uploadedFrom ?? Int64.min), .int(scope.uploadedTo ?? Int64.max)])
                .first?.int64("rows") ?? Int64.max
        } catch {
            // (Not `catch … where`: this compiler fails on it with typed throws.)
            if error.code == .keyDoesNotExist { return false }
            throw error
        }
        for term in terms {
            let termRows = try database.query("EXPLAIN SELECT 1 FROM photo_words WHERE word >= ? AND word < ?", Self.range(term))
                .first?.int64("rows") ?? Int64.max
            if termRows <= spanRows { return false }
        }
        return true
    }

    /// Photos of `scope`'s span of upload times (and author) that `keep`
    /// keeps (given each batch), newest upload first (`oldestFirst`: oldest),
    /// at most `limit`; at most `allowance` rows of each index read.
    private func uploaded(within scope: PhotoScope, below: Int64, limit: Int, allowance: Int, oldestFirst: Bool = false,
                          keep: ([Int64]) throws -> [Int64] = { $0 }) throws -> (ids: [Int64], exhausted: Bool) {
        let span: [DatabaseValue] = [.int(scope.uploadedFrom ?? Int64.min), .int(scope.uploadedTo ?? Int64.max)]
        if let userID = scope.userID, let theirs = try photos(of: userID, below: below, atMost: allowance) {
            // An author with at most `allowance` photos: all of them, sorted.
            var times: [(id: Int64, created: Int64)] = []
            for group in Self.groups(theirs) {
                times += try database.query("SELECT IdPhoto, created FROM photo_details WHERE IdPhoto IN (\(Self.marks(group.count))) "
                                                + "AND created >= ? AND created <= ?", group.map { .int($0) } + span)
                    .compactMap { row in row.int64("IdPhoto").flatMap { id in row.int64("created").map { (id, $0) } } }
            }
            let newest = times.sorted { $0.created != $1.created ? $0.created > $1.created : $0.id > $1.id }.map(\.id)
            let ordered = oldestFirst ? Array(newest.reversed()) : newest
            var found: [Int64] = []
            for start in stride(from: 0, to: ordered.count, by: Self.idsPerStatement) where found.count < limit {
                found += try keep(Array(ordered[start..<min(start + Self.idsPerStatement, ordered.count)])).prefix(limit - found.count)
            }
            return (found, false)
        }
        // The upload-time key from the span's newest (oldest) end, in chunks,
        // each continuing past the last (created, IdPhoto) read; the author
        // and `below` checked.
        var found: [Int64] = []
        let start = oldestFirst ? (created: Int64.min, id: Int64.min) : (created: Int64.max, id: Int64.max)
        var (last, read, chunk) = (start, 0, max(limit, PostingIntersection.firstChunk))
        while found.count < limit {
            let want = min(chunk, allowance - read)
            guard want > 0 else { return (found, true) }
            let rows = try uploadTimes(span, past: last, oldestFirst: oldestFirst, limit: want)
            read += rows.count
            let kept = try keep(try photos(rows.map(\.id).filter { $0 < below }, in: PhotoScope(userID: scope.userID)))
            found += kept.prefix(limit - found.count)
            guard let final = rows.last, rows.count == want else { break }
            (last, chunk) = ((final.created, final.id), min(chunk * 4, PostingIntersection.maxChunk))
        }
        return (found, false)
    }

    /// At most `limit` photos of a span of upload times (`span`: from, to)
    /// past `last` in the upload-time key: below it, newest upload first, or
    /// with `oldestFirst` above it, oldest first.
    private func uploadTimes(_ span: [DatabaseValue], past last: (created: Int64, id: Int64), oldestFirst: Bool,
                             limit: Int) throws -> [(id: Int64, created: Int64)] {
        let (past, order) = oldestFirst ? (">", "") : ("<", " DESC")
        do {
            return try database.query(
                "SELECT IdPhoto, created FROM photo_details FORCE INDEX (\(Self.uploadTimeIndex)) WHERE created >= ? AND created <= ? "
                    + "AND (created \(past) ? OR (created = ? AND IdPhoto \(past) ?)) ORDER BY created\(order), IdPhoto\(order) LIMIT ?",
                span + [.int(last.created), .int(last.created), .int(last.id), .int(Int64(limit))])
                .compactMap { row in row.int64("IdPhoto").flatMap { id in row.int64("created").map { (id, $0) } } }
        } catch {
            // (Not `catch … where`: this compiler fails on it with typed throws.)
            throw error.code == .keyDoesNotExist ? PhotoSearchError.uploadTimesNotIndexed : error
        }
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

    /// Those of `ids` that have a photos row in `scope`, in their order.
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

    /// The photos of `ids` with their authors, in the order of `ids`.
    private func records(_ ids: [Int64]) throws -> [PhotoRecord] {
        var found: [Int64: PhotoRecord] = [:]
        for group in Self.groups(ids) {
            for record in try database.query("SELECT p.IdPhoto, p.title, l.IdUser, l.username FROM photos p "
                                                 + "JOIN login l ON (l.IdUser = p.IdUser) WHERE p.IdPhoto IN (\(Self.marks(group.count)))",
                                             group.map { .int($0) }).compactMap(MariaDBPhotoStore.record) {
                found[record.id] = record
            }
        }
        return ids.compactMap { found[$0] }
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

    /// The words that start with `term`: UTF-8 never holds the byte 0xFF.
    private static func range(_ term: [UInt8]) -> [DatabaseValue] {
        [.bytes(term), .bytes(term + [0xFF])]
    }
}
