import Testing
@testable import IReporterKit
import TestSupport

extension DatabaseTests {
    /// `search` on MariaDB: the index (sql/migrations/005) kept in step with
    /// uploads and deletes, filled by the backfill, and the query plans.
    @Suite struct SearchIntegrationTests {
        /// A harness with the index table, alice (IdUser 1) and Zoë (2).
        private func phone(schema: String = "schema.sql", migrated: Bool = true) throws -> APIHarness {
            // migrated: migrations 003 to 005 (TestServices.resetTables); not: the 2012 tables alone.
            let phone = try APIHarness(schema: schema, migrated: migrated)
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
            _ = try phone.send([("command", "register"), ("username", "Zoë"), ("password", "p")])
            return phone
        }

        /// Adds photos through the store (the upload's path, without image work).
        private func add(_ phone: APIHarness, _ titles: [(user: Int64, title: String)]) throws {
            let store = MariaDBPhotoStore(database: phone.database)
            for (user, title) in titles {
                _ = try store.add(userID: user, title: Array(title.utf8), publish: { _ in }, unpublish: { _ in })
            }
        }

        private func ids(_ phone: APIHarness, _ fields: [(String, String)]) throws -> [String] {
            let body = try phone.body([("command", "search")] + fields)
            return body.split(separator: "\"IdPhoto\":\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        }

        private func wordRows(_ phone: APIHarness, photo: Int64) throws -> Int64 {
            try phone.database.query("SELECT COUNT(*) AS n FROM photo_words WHERE IdPhoto = ?", [.int(photo)]).first?.int64("n") ?? -1
        }

        @Test(arguments: ["schema.sql", "original-myisam.sql"])
        func theRulesOnMariaDB(schema: String) throws {
            let phone = try phone(schema: schema)
            try add(phone, [(1, "Sunset over Paris"), (1, "sunny day"), (2, "Paris at night"), (1, "Sunrise, Paris 🌅"),
                            (1, "東京タワーの夜"), (2, "ZOË at the beach")])
            #expect(try ids(phone, [("q", "sun")]) == ["5", "3", "2"])
            #expect(try ids(phone, [("q", "SUN paris")]) == ["5", "2"])
            #expect(try ids(phone, [("q", "zoe")]) == ["7", "4"], "titles and usernames, accents and case ignored")
            #expect(try ids(phone, [("q", "Zoë beach")]) == ["7"])
            #expect(try ids(phone, [("q", "タワー")]) == ["6"])
            #expect(try ids(phone, [("q", "夜")]) == ["6"])
            #expect(try ids(phone, [("q", "🌅 sunrise")]) == ["5"], "emoji ignored")
            #expect(try ids(phone, [("q", "' OR 1=1 --")]) == [])
            #expect(try ids(phone, [("q", "+paris -night \"at\" *")]) == ["4"], "operators are separators")
            #expect(try ids(phone, [("q", "sun"), ("count", "2")]) == ["5", "3"])
            #expect(try ids(phone, [("q", "sun"), ("count", "2"), ("before", "3")]) == ["2"])
            #expect(try ids(phone, [("q", "paris"), ("sort", "relevance")]) == ["5", "4", "2"])
            #expect(try ids(phone, [("q", "sun paris"), ("sort", "relevance")]) == ["5", "2"])
            #expect(try phone.body([("command", "search"), ("q", "night")])
                    == #"{"result":[{"IdPhoto":"4","title":"Paris at night","IdUser":"2","username":"Zo\u00eb"}]}"#)
        }

        @Test func uploadsAndDeletesKeepTheIndexInStep() throws {
            let phone = try phone()
            #expect(try phone.body([("command", "upload"), ("title", "Crème brûlée")], file: makeJPEG(width: 64, height: 48))
                    == #"{"successful":1}"#)
            #expect(try ids(phone, [("q", "creme")]) == ["2"])
            try MariaDBPhotoStore(database: phone.database).delete(id: 2)
            #expect(try wordRows(phone, photo: 2) == 0)
            #expect(try ids(phone, [("q", "creme")]) == [])
        }

        /// An id handed out again (InnoDB's counter after a restart) leaves
        /// nothing of the earlier photo's words.
        @Test func aPhotoIdHandedOutAgainTakesOnlyItsOwnWords() throws {
            let phone = try phone()
            try add(phone, [(1, "harbour")])
            try phone.database.execute("INSERT INTO photo_words (word, IdPhoto) VALUES ('stale', 3), ('harbour', 3)")
            try add(phone, [(2, "sunset")])
            #expect(try ids(phone, [("q", "stale")]) == [])
            #expect(try ids(phone, [("q", "harbour")]) == ["2"])
            #expect(try ids(phone, [("q", "sunset")]) == ["3"])
            #expect(try wordRows(phone, photo: 3) == 2, "sunset, zoë")
        }

        @Test func aPrefixOfManyWordsAndSeveralCommonTerms() throws {
            let phone = try phone()
            // 40 distinct words starting with "s" (more than merged one by one), half of them with "night".
            try add(phone, (0..<40).map { (1, "s\(String(UnicodeScalar(UInt8(97 + $0 % 26))))\($0) \($0 % 2 == 0 ? "night" : "day")") })
            #expect(try ids(phone, [("q", "s"), ("count", "3")]) == ["41", "40", "39"])
            #expect(try ids(phone, [("q", "s night"), ("count", "3")]) == ["40", "38", "36"])
            #expect(try ids(phone, [("q", "night s"), ("count", "2"), ("before", "36")]) == ["34", "32"])
            #expect(try ids(phone, [("q", "alice day"), ("count", "2")]) == ["41", "39"], "the username's words too")
        }

        @Test func commonWordsThatSeldomMeetAreMergedInOrder() throws {
            let phone = try phone()
            // 1,200 photos, each "night <n>" or "city <n>", every 150th "night city <n>" (alternately
            // alice's and Zoë's), indexed by the backfill: each word's list spans many of the merge's chunks.
            try phone.database.execute("""
                INSERT INTO photos (IdUser, title) SELECT 1 + (seq DIV 150) % 2, \
                IF(seq % 150 = 0, CONCAT('night city ', seq), CONCAT(IF(seq % 2 = 0, 'night ', 'city '), seq)) \
                FROM seq_1_to_1200
                """)
            _ = try MariaDBSearchBackfill(database: phone.database).run()
            func expected(_ condition: String) throws -> [String] {
                try phone.database.query("SELECT IdPhoto FROM photos WHERE \(condition) ORDER BY IdPhoto DESC")
                    .compactMap { $0.int64("IdPhoto").map { String($0) } }
            }
            let both = try expected("title LIKE 'night city %'")
            #expect(both.count == 8)
            #expect(try ids(phone, [("q", "night city")]) == both)
            #expect(try ids(phone, [("q", "CITY nig")]) == both, "prefixes, in any order")
            #expect(try ids(phone, [("q", "city night"), ("count", "3"), ("before", both[1])]) == Array(both[2...4]))
            // "1" starts more than maxWords words (1, 10, 100, ...): checked on what the other two found.
            #expect(try ids(phone, [("q", "night city 1")]) == (try expected("title LIKE 'night city 1%'")))
            #expect(try ids(phone, [("q", "night city"), ("sort", "relevance"), ("count", "2")]) == Array(both[0...1]))
            let search = MariaDBPhotoSearch(database: phone.database)
            let terms = [Array("night".utf8), Array("city".utf8)]
            #expect(try search.countMatches(terms: terms, scope: .everything, cap: 100) == 8)
            #expect(try search.countMatches(terms: terms, scope: .everything, cap: 5) == 5)
            #expect(try search.newestMatches(terms: terms, scope: PhotoScope(userID: 2), before: nil, limit: 10).map { String($0.id) }
                    == (try expected("title LIKE 'night city %' AND IdUser = 2")))
            #expect(try search.countMatches(terms: terms, scope: PhotoScope(userID: 2), cap: 100) == 4)
            #expect(try ids(phone, [("q", "night city moon")]) == [], "a term that starts no word")
            // Only broad terms ("1", "2": 1, 10-19, 100-199, ...): the photos walked newest first, within the budget.
            #expect(try ids(phone, [("q", "1 2")]) == [], "no title has two numbers")
            #expect(try ids(phone, [("q", "1"), ("count", "2")]) == Array(try expected("title LIKE '% 1%'").prefix(2)))
            #expect(throws: PhotoSearchError.tooBroad, "the walk stops at its rows") {
                try MariaDBPhotoSearch(database: phone.database, rowsBudget: 10)
                    .newestMatches(terms: [Array("1".utf8), Array("2".utf8)], scope: .everything, before: nil, limit: 10)
            }
            #expect(try phone.body([("command", "search"), ("q", "a b c d e")]).hasPrefix(#"{"result":["#))
            #expect(throws: PhotoSearchError.tooBroad, "a merge beyond its rows") {
                try MariaDBPhotoSearch(database: phone.database, rowsBudget: 500)
                    .newestMatches(terms: [Array("night".utf8), Array("city".utf8)], scope: .everything, before: nil, limit: 50)
            }
        }

        /// MariaDB's own count of the rows a body read on this connection
        /// (SHOW SESSION STATUS): `scanned`, rows read by walking an index
        /// or a table (Handler_read_next, _prev, _first, _last, _rnd_next);
        /// `lookups`, index dives (Handler_read_key). What a plan reads,
        /// not how long it takes.
        private func rowsRead<Value>(_ phone: APIHarness, _ body: () throws -> Value) throws -> (value: Value, scanned: Int64, lookups: Int64) {
            func status() throws -> [String: Int64] {
                var values: [String: Int64] = [:]
                for row in try phone.database.query("SHOW SESSION STATUS LIKE 'Handler_read%'") {
                    if let name = row["Variable_name"], let value = row.int64("Value") { values[String(decoding: name, as: UTF8.self)] = value }
                }
                return values
            }
            let before = try status()
            let value = try body()
            let after = try status()
            func delta(_ name: String) -> Int64 { (after[name] ?? 0) - (before[name] ?? 0) }
            // The status query itself reads nothing through a handler.
            return (value, delta("Handler_read_next") + delta("Handler_read_prev") + delta("Handler_read_first") + delta("Handler_read_last")
                        + delta("Handler_read_rnd_next"), delta("Handler_read_key"))
        }

        /// 4,000 photos, one a minute from 1,000,000 s, every 50th
        /// "night city", the others "night n" or "city n" (alice's, every
        /// 100th Zoë's): larger than any budget below, so a plan that reads
        /// the table shows.
        private func manyPhotos() throws -> APIHarness {
            let phone = try phone()
            try phone.database.execute("""
                INSERT INTO photos (IdUser, title) SELECT IF(seq % 100 = 0, 2, 1), \
                IF(seq % 50 = 0, CONCAT('night city ', seq), CONCAT(IF(seq % 2 = 0, 'night ', 'city '), seq)) FROM seq_1_to_4000
                """)
            try phone.database.execute("INSERT INTO photo_details (IdPhoto, created, width, height) "
                                       + "SELECT IdPhoto, 1000000 + 60 * IdPhoto, 10, 10 FROM photos")
            _ = try MariaDBSearchBackfill(database: phone.database).run()
            try phone.database.execute("ANALYZE TABLE photos, photo_details, photo_words")
            return phone
        }

        @Test func aSearchByUploadDateAloneReadsItsPageNotTheTable() throws {
            let phone = try manyPhotos()
            let search = MariaDBPhotoSearch(database: phone.database, rowsBudget: 200)
            // Before all but the oldest 100 photos (IdPhoto 2-101): the old plan walked the 3,900 newer ones first.
            let early = PhotoScope(uploadedTo: 1000000 + 60 * 101)
            var page: [Int64] = []
            var total = 0
            let read = try rowsRead(phone) {
                page = try search.newestMatches(terms: [], scope: early, before: nil, limit: 50).map(\.id)
                total = try search.countMatches(terms: [], scope: early, cap: 4000)
            }
            #expect(page == Array((52...101).reversed()))
            #expect(total == 100)
            // The page's 64 rows of the upload-time key (its first read), the count's 100 and the end of the span.
            #expect(read.scanned <= 50 + 100 + 2 * PostingIntersection.firstChunk, "\(read.scanned) scanned, \(read.lookups) lookups")
            #expect(read.lookups <= 4 * (64 + 100) + 20, "each photo's row and author, not the table's: \(read.lookups)")
            // From the newest: the first page only.
            let recent = try rowsRead(phone) {
                try search.newestMatches(terms: [], scope: PhotoScope(uploadedFrom: 1000000), before: nil, limit: 50)
            }
            #expect(recent.value.first?.id == 4001)
            #expect(recent.scanned <= PostingIntersection.firstChunk + 2, "\(recent.scanned) scanned, \(recent.lookups) lookups")
        }

        @Test func anAuthorsPhotosByUploadDateAreBoundedToo() throws {
            let phone = try manyPhotos()
            // Zoë has 40 photos: hers, all of them, sorted by upload time.
            let zoe = try rowsRead(phone) {
                try MariaDBPhotoSearch(database: phone.database, rowsBudget: 200)
                    .newestMatches(terms: [], scope: PhotoScope(userID: 2, uploadedTo: 1000000 + 60 * 2001), before: nil, limit: 5)
            }
            #expect(zoe.value.map(\.id) == [2001, 1901, 1801, 1701, 1601])
            #expect(zoe.scanned <= 41 + 10, "\(zoe.scanned) scanned, \(zoe.lookups) lookups")
            // Alice has more photos than the budget: the upload-time key newest first, hers kept.
            #expect(try MariaDBPhotoSearch(database: phone.database, rowsBudget: 200)
                .newestMatches(terms: [], scope: PhotoScope(userID: 1, uploadedFrom: 1000000 + 60 * 3990), before: nil, limit: 3)
                .map(\.id) == [4000, 3999, 3998])
            // More photos than the budget and few of them in the span: refused once the budget is read.
            let sparse = try rowsRead(phone) {
                #expect(throws: PhotoSearchError.tooBroad) {
                    try MariaDBPhotoSearch(database: phone.database, rowsBudget: 10)
                        .newestMatches(terms: [], scope: PhotoScope(userID: 2, uploadedTo: 1000000 + 60 * 2001), before: nil, limit: 5)
                }
            }
            #expect(sparse.scanned <= 2 * (5 + 10) + 10, "\(sparse.scanned) scanned, \(sparse.lookups) lookups")
        }

        /// Flickr's `date-posted-asc`: the same keys as newest first, read
        /// from their other end, each read stopping at its page.
        @Test func oldestFirstReadsTheKeysFromTheirOtherEnd() throws {
            let phone = try manyPhotos()
            let search = MariaDBPhotoSearch(database: phone.database, rowsBudget: 200)
            // Each read: the page's rows of the key, then a derived table of them read and sorted again (~10 more).
            let first = try rowsRead(phone) { try search.photos(in: .everything, oldestFirst: true, offset: 0, limit: 3) }
            #expect(first.value.map(\.id) == [2, 3, 4])
            #expect(first.scanned <= 3 + 20, "\(first.scanned) scanned, \(first.lookups) lookups")
            let zoe = try rowsRead(phone) { try search.photos(in: PhotoScope(userID: 2), oldestFirst: true, offset: 0, limit: 3) }
            #expect(zoe.value.map(\.id) == [101, 201, 301])
            #expect(zoe.scanned <= 3 + 20, "her key from its start: \(zoe.scanned) scanned, \(zoe.lookups) lookups")
            // A span: the upload-time key from the span's start.
            let late = try rowsRead(phone) { try search.photos(in: PhotoScope(uploadedFrom: 1000000 + 60 * 3990), oldestFirst: true, offset: 0, limit: 3) }
            #expect(late.value.map(\.id) == [3990, 3991, 3992])
            #expect(late.scanned <= PostingIntersection.firstChunk + 2, "\(late.scanned) scanned, \(late.lookups) lookups")
            #expect(try search.photos(in: PhotoScope(uploadedFrom: 1000000 + 60 * 3999), oldestFirst: true, offset: 0, limit: 5).map(\.id) == [3999, 4000, 4001])
            // An author with fewer photos than the budget: hers, sorted; alice's through the key, hers kept.
            #expect(try search.photos(in: PhotoScope(userID: 2, uploadedFrom: 1000000 + 60 * 2000), oldestFirst: true, offset: 0, limit: 2).map(\.id)
                    == [2001, 2101])
            #expect(try search.photos(in: PhotoScope(userID: 1, uploadedFrom: 1000000 + 60 * 100), oldestFirst: true, offset: 0, limit: 3).map(\.id)
                    == [100, 102, 103])
            #expect(throws: PhotoSearchError.tooBroad) {
                try MariaDBPhotoSearch(database: phone.database, rowsBudget: 10)
                    .photos(in: PhotoScope(userID: 2, uploadedFrom: 1000000 + 60 * 2000), oldestFirst: true, offset: 0, limit: 5)
            }
            // An account's list pages far in its key: the entries skipped, not their rows.
            let deep = try rowsRead(phone) { try search.photos(in: PhotoScope(userID: 1), oldestFirst: false, offset: 3900, limit: 5) }
            #expect(deep.value.map(\.id) == [61, 60, 59, 58, 57])
            #expect(deep.lookups <= 2 * 5 + 10 && deep.scanned <= 3905 + 20,
                    "her key's entries to the page, rows for the page alone: \(deep.scanned) scanned, \(deep.lookups) lookups")
            // Within upload dates: her photos and their times by key, sorted (the incremental backup's call).
            #expect(try search.photos(in: PhotoScope(userID: 1, uploadedFrom: 1000000), oldestFirst: false, offset: 3900, limit: 5)
                .map(\.id) == [61, 60, 59, 58, 57])
            #expect(try search.photos(in: PhotoScope(userID: 2), oldestFirst: true, offset: 38, limit: 5).map(\.id) == [3901, 4001])
            #expect(try search.photos(in: PhotoScope(userID: 2, uploadedTo: 1000000 + 60 * 401), oldestFirst: false, offset: 1, limit: 2)
                .map(\.id) == [301, 201])
            let counted = try rowsRead(phone) { try search.countMatches(terms: [], scope: PhotoScope(userID: 1), cap: 100_000) }
            #expect(counted.value == 3960)
            #expect(counted.lookups <= 5 && counted.scanned <= 2 * 3960 + 10, "her key alone: \(counted.scanned) scanned, \(counted.lookups) lookups")
            // With words: every match read newest first, turned around, paged.
            let terms = [Array("night".utf8), Array("city".utf8)]
            #expect(try MariaDBPhotoSearch(database: phone.database)
                .oldestFirst(terms: terms, scope: .everything, offset: 1, limit: 3, window: 4000).map(\.id) == [101, 151, 201])
        }

        @Test func commonWordsThatSeldomMeetStopAtTheBudget() throws {
            let phone = try manyPhotos()
            let search = MariaDBPhotoSearch(database: phone.database, rowsBudget: 300)
            let terms = [Array("night".utf8), Array("city".utf8)]
            // 80 photos have both: a page of 5 is found among the newest.
            #expect(try search.newestMatches(terms: terms, scope: .everything, before: nil, limit: 5).map(\.id) == [4001, 3951, 3901, 3851, 3801])
            // Below 3,000, 59 of them among 2,900 photos with only one: the budget ends the merge, refused.
            let read = try rowsRead(phone) {
                #expect(throws: PhotoSearchError.tooBroad) {
                    try search.newestMatches(terms: terms, scope: .everything, before: 3000, limit: 50)
                }
            }
            #expect(read.scanned <= 50 + 300 + 2 * (MariaDBPhotoSearch.maxWords + 1) + 10, "\(read.scanned) scanned, \(read.lookups) lookups")
            // A count answers what it found within the budget.
            let count = try search.countMatches(terms: terms, scope: .everything, cap: 100)
            #expect(count > 5 && count < 80, "\(count)")
            // With an author (one word: merged, not one statement per word): alice has more photos than the budget.
            let byAuthor = try rowsRead(phone) {
                #expect(throws: PhotoSearchError.tooBroad) {
                    try search.newestMatches(terms: [Array("night".utf8), Array("city".utf8)], scope: PhotoScope(userID: 1),
                                             before: 3000, limit: 50)
                }
            }
            // Her photos up to the budget (to learn there are more), then the merge within it.
            #expect(byAuthor.scanned <= 2 * (50 + 300 + 1) + 2 * (MariaDBPhotoSearch.maxWords + 1) + 10, "\(byAuthor.scanned) scanned, \(byAuthor.lookups) lookups")
        }

        @Test func wordsInASpanLongAgoAreFoundFromTheSpan() throws {
            let phone = try manyPhotos()
            let search = MariaDBPhotoSearch(database: phone.database, rowsBudget: 300)
            // "night" has 2,000 photos, all but 50 newer than the span: its list would spend the budget first.
            let old = try rowsRead(phone) {
                try search.newestMatches(terms: [Array("night".utf8)], scope: PhotoScope(uploadedTo: 1000000 + 60 * 101), before: nil, limit: 20)
            }
            #expect(old.value.map(\.id) == Array(stride(from: 101, through: 63, by: -2)))
            #expect(old.scanned <= 2 * PostingIntersection.firstChunk + 20, "the span's rows and their words, not the word's list: \(old.scanned) scanned, \(old.lookups) lookups")
            #expect(try search.newestMatches(terms: [Array("night".utf8), Array("city".utf8)], scope: PhotoScope(uploadedTo: 1000000 + 60 * 101),
                                             before: nil, limit: 20).map(\.id) == [101, 51])
            #expect(try search.countMatches(terms: [Array("night".utf8)], scope: PhotoScope(uploadedTo: 1000000 + 60 * 101), cap: 4000) == 50)
        }

        @Test func anAuthorWithFewPhotosIsSearchedThroughTheirs() throws {
            let phone = try manyPhotos()
            // Zoë's 40 photos ("night city N"), read whole: no word's list is walked for them.
            let zoe = try rowsRead(phone) {
                try MariaDBPhotoSearch(database: phone.database, rowsBudget: 300)
                    .newestMatches(terms: [Array("city".utf8)], scope: PhotoScope(userID: 2), before: nil, limit: 3)
            }
            #expect(zoe.value.map(\.id) == [4001, 3901, 3801])
            #expect(zoe.scanned <= 41 + 2 * 40 + 20, "\(zoe.scanned) scanned, \(zoe.lookups) lookups")
            #expect(try MariaDBPhotoSearch(database: phone.database, rowsBudget: 300)
                .newestMatches(terms: [Array("city".utf8)], scope: PhotoScope(userID: 2, uploadedTo: 1000000 + 60 * 2001), before: nil, limit: 2)
                .map(\.id) == [2001, 1901])
        }

        @Test func withoutTheUploadTimeIndexADateAloneIsRefused() throws {
            let phone = try manyPhotos()
            try phone.database.execute("DROP INDEX \(MariaDBPhotoSearch.uploadTimeIndex) ON photo_details")
            let search = MariaDBPhotoSearch(database: phone.database)
            #expect(throws: PhotoSearchError.uploadTimesNotIndexed) {
                try search.newestMatches(terms: [], scope: PhotoScope(uploadedTo: 1000000 + 60 * 101), before: nil, limit: 50)
            }
            // With words, the words' index drives: the span is checked per photo.
            #expect(try search.newestMatches(terms: [Array("city".utf8)], scope: PhotoScope(uploadedTo: 1000000 + 60 * 101),
                                             before: nil, limit: 2).map(\.id) == [101, 100])
        }

        @Test func byAuthorAndCountedAsFlickrsListsAsk() throws {
            let phone = try phone()
            try add(phone, [(1, "sunset one"), (2, "sunset two"), (1, "beach"), (2, "sunset three")])
            let search = MariaDBPhotoSearch(database: phone.database)
            #expect(try search.newestMatches(terms: [], scope: PhotoScope(userID: 2), before: nil, limit: 10).map(\.id) == [5, 3])
            #expect(try search.newestMatches(terms: [], scope: .everything, before: 5, limit: 2).map(\.id) == [4, 3])
            #expect(try search.newestMatches(terms: [Array("sun".utf8)], scope: PhotoScope(userID: 1), before: nil, limit: 10).map(\.id) == [2])
            #expect(try search.countMatches(terms: [Array("sunset".utf8)], scope: .everything, cap: 10) == 3)
            #expect(try search.countMatches(terms: [Array("sunset".utf8)], scope: .everything, cap: 2) == 2)
            #expect(try search.countMatches(terms: [], scope: PhotoScope(userID: 1), cap: 10) == 2)
            #expect(try search.countMatches(terms: [Array("moon".utf8)], scope: .everything, cap: 10) == 0)
            #expect(try search.search(PhotoSearchQuery(terms: [Array("sunset".utf8)], offset: 1, limit: 1)).map(\.id) == [3])
        }

        @Test func byUploadTimeOnEveryPlan() throws {
            let phone = try phone()
            let store = MariaDBPhotoStore(database: phone.database)
            var uploadedAt: [Int64: Int64] = [:]
            for (created, title) in [(1000, "paris sunset"), (2000, "paris night"), (3000, "paris sunset"), (4000, "paris sunset")] {
                let id = try store.add(userID: 1, title: Array(title.utf8),
                                       details: PhotoDetails(created: Int64(created), width: 10, height: 10),
                                       publish: { _ in }, unpublish: { _ in })
                uploadedAt[Int64(created)] = id
            }
            // As the PHP version stores one: no upload time kept, so in no span.
            _ = try store.add(userID: 1, title: Array("paris sunset".utf8), publish: { _ in }, unpublish: { _ in })
            let search = MariaDBPhotoSearch(database: phone.database)
            let span = PhotoScope(uploadedFrom: 2000, uploadedTo: 3000)
            let terms = { (text: String) in text.split(separator: " ").map { Array($0.utf8) } }
            func newest(_ text: String, _ scope: PhotoScope) throws -> [Int64] {
                try search.newestMatches(terms: terms(text), scope: scope, before: nil, limit: 10).map(\.id)
            }
            #expect(try newest("", span) == [uploadedAt[3000]!, uploadedAt[2000]!], "no words")
            #expect(try newest("sunset", span) == [uploadedAt[3000]!], "one word")
            #expect(try newest("paris sunset", span) == [uploadedAt[3000]!], "words merged")
            #expect(try newest("paris", PhotoScope(uploadedFrom: 3000)) == [uploadedAt[4000]!, uploadedAt[3000]!])
            #expect(try newest("paris", PhotoScope(userID: 2, uploadedTo: 5000)).isEmpty)
            #expect(try newest("sunset", PhotoScope(uploadedTo: 1000)) == [uploadedAt[1000]!])
            #expect(try search.countMatches(terms: terms("paris"), scope: span, cap: 10) == 2)
            #expect(try search.countMatches(terms: terms("paris"), scope: .everything, cap: 10) == 5)
        }

        @Test func theBackfillIndexesOlderRowsResumably() throws {
            let phone = try phone()
            // Rows as the PHP version (or an older server) stored them: no words.
            for title in ["old harbour", "Old Town", "newer harbour", "Zoë's boat"] {
                try phone.database.execute("INSERT INTO photos (IdUser, title) VALUES (2, ?)", [.bytes(Array(title.utf8))])
            }
            #expect(try ids(phone, [("q", "harbour")]) == [])
            let backfill = MariaDBSearchBackfill(database: phone.database, batchSize: 2)
            #expect(try backfill.run(maxBatches: 1) == 2, "stopped after one batch")
            #expect(try ids(phone, [("q", "harbour")]) == ["2"])
            #expect(try backfill.run() == 2, "goes on where it stopped")
            #expect(try ids(phone, [("q", "harbour")]) == ["4", "2"])
            #expect(try ids(phone, [("q", "zoe")]) == ["5", "4", "3", "2"], "with the author's name")
            #expect(try backfill.run() == 0, "nothing left")
            try backfill.restart()
            #expect(try backfill.run() == 4)
            #expect(try wordRows(phone, photo: 2) == 3, "indexed twice is indexed once: old, harbour, zoe")
        }

        @Test func withoutTheMigrationUploadsWorkAndSearchSaysSo() throws {
            let phone = try phone(migrated: false)
            #expect(try phone.body([("command", "upload"), ("title", "x")], file: makeJPEG(width: 64, height: 48))
                    == #"{"successful":1}"#)
            #expect(try phone.body([("command", "search"), ("q", "x")]) == #"{"error":"Search is not available"}"#)
        }
    }
}
