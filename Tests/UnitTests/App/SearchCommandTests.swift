import Testing
@testable import IReporterKit

/// `search` on the in-memory stores (the same rules on MariaDB:
/// SearchIntegrationTests).
struct SearchCommandTests {
    /// alice (IdUser 1) and Zoë (2), and photos 2... with these titles.
    private func phone(_ titles: [(user: Int64, title: String)]) throws -> AppHarness {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        try phone.send([("command", "register"), ("username", "Zoë"), ("password", "p")])
        for (user, title) in titles {
            _ = try phone.photos.add(userID: user, title: Array(title.utf8), publish: { _ in }, unpublish: { _ in })
        }
        return phone
    }

    private func ids(_ phone: AppHarness, _ fields: [(String, String)]) throws -> [String] {
        let body = try phone.body([("command", "search")] + fields)
        return body.split(separator: "\"IdPhoto\":\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }

    @Test func everyWordIsRequiredAsTheStartOfAWordNewestFirst() throws {
        let phone = try phone([(1, "Sunset over Paris"), (1, "sunny day"), (2, "Paris at night"), (1, "Sunrise, Paris 🌅")])
        #expect(try ids(phone, [("q", "sun")]) == ["5", "3", "2"])
        #expect(try ids(phone, [("q", "SUN paris")]) == ["5", "2"])
        #expect(try ids(phone, [("q", "zoe")]) == ["4"], "the author's username counts, accents ignored")
        #expect(try ids(phone, [("q", "ZOË paris")]) == ["4"])
        #expect(try ids(phone, [("q", "moon")]) == [])
        #expect(try phone.body([("command", "search"), ("q", "night")])
                == #"{"result":[{"IdPhoto":"4","title":"Paris at night","IdUser":"2","username":"Zo\u00eb"}]}"#,
                "the stream's shape")
    }

    @Test func extrasAreTheStreams() throws {
        let phone = try phone([(1, "Sunset over Paris"), (2, "Paris at night")])
        try phone.send([("command", "login"), ("username", "Zoë"), ("password", "p")])
        try phone.send([("command", "like"), ("IdPhoto", "2")])
        let fields = "likes,dislikes,comments,myvote,created,width,height,secret,server"
        let found = try phone.body([("command", "search"), ("q", "sunset"), ("extras", fields)])
        #expect(found == (try phone.body([("command", "stream"), ("IdPhoto", "2"), ("extras", fields)])))
        #expect(found.contains(#""server":"000000""#) && !found.contains(#""secret":null"#), "the sizes' names")
        #expect(try phone.body([("command", "search"), ("q", "sunset"), ("extras", "likes,myvote")])
                == #"{"result":[{"IdPhoto":"2","title":"Sunset over Paris","IdUser":"1","username":"alice","likes":"1","myvote":"1"}]}"#)
        #expect(try phone.body([("command", "search"), ("q", "sunset"), ("extras", "likes,password")])
                == #"{"error":"Invalid extras: a comma list of likes, dislikes, comments, myvote, created, width, height, secret, server, description is expected"}"#)
    }

    @Test func keptAnswersAreEachViewersOwnAndGoWithAnyChange() throws {
        var policy = AppHarness.cheapPolicy
        policy.searchCacheMillis = 60_000
        let phone = try AppHarness(policy: policy)
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        _ = try phone.photos.add(userID: 1, title: Array("sunset".utf8), publish: { _ in }, unpublish: { _ in })
        let query = [("command", "search"), ("q", "sunset"), ("extras", "likes,myvote")]
        #expect(try phone.body(query).contains(#""likes":"0","myvote":"0""#))
        try phone.send([("command", "like"), ("IdPhoto", "2")])
        #expect(try phone.body(query).contains(#""likes":"1","myvote":"1""#), "the vote bumped the generation")
        try phone.send([("command", "logout")])
        #expect(try phone.body(query).contains(#""likes":"1","myvote":null"#), "no session: no one's vote")
        _ = try phone.photos.add(userID: 1, title: Array("sunset again".utf8), publish: { _ in }, unpublish: { _ in })
        func photos(_ fields: [(String, String)]) throws -> Int { try phone.body(fields).split(separator: "\"IdPhoto\"").count - 1 }
        #expect(try photos([("command", "search"), ("q", "sunset")]) == 2, "another question: asked now")
        #expect(try photos(query) == 1, "kept: nothing went through the installation")
        phone.clock.advance(byMillis: 59_999)
        #expect(try photos(query) == 1)
        phone.clock.advance(byMillis: 1)
        #expect(try photos(query) == 2, "a minute old (search_cache_ms): asked again")
        _ = try phone.photos.add(userID: 1, title: Array("sunset once more".utf8), publish: { _ in }, unpublish: { _ in })
        phone.counters.bumpStreamGeneration()
        #expect(try photos(query) == 3)
    }

    @Test func aSearchTheStoreFindsTooBroadIsAClearError() throws {
        final class TooBroad: PhotoSearch {
            func newestMatches(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int) throws -> [PhotoRecord] {
                throw PhotoSearchError.tooBroad
            }
            func photos(in scope: PhotoScope, oldestFirst: Bool, offset: Int, limit: Int) throws -> [PhotoRecord] { throw PhotoSearchError.tooBroad }
            func countMatches(terms: [[UInt8]], scope: PhotoScope, cap: Int) throws -> Int { throw PhotoSearchError.tooBroad }
            func wholeWordCounts(photoIDs: [Int64], terms: [[UInt8]]) throws -> [Int64: Int] { [:] }
        }
        let phone = try phone([])
        var services = phone.services
        services.search = TooBroad()
        #expect(try phone.body([("command", "search"), ("q", "s t")], through: IReporterAPI(services: services))
                == #"{"error":"Search is too broad: give longer or rarer words"}"#)
        let flickr = FlickrAPI(services: services).handle(["method": Array("flickr.photos.search".utf8), "text": Array("s t".utf8),
                                                           "format": Array("json".utf8), "nojsoncallback": Array("1".utf8)],
                                                          oauthConsumerKey: nil, siteURL: "http://h/iReporter/")
        #expect(String(decoding: flickr.body, as: UTF8.self)
                == #"{"stat":"fail","code":3,"message":"text is too broad: give longer or rarer words"}"#)
        let byDate = FlickrAPI(services: services).handle(["method": Array("flickr.photos.search".utf8), "user_id": Array("1".utf8),
                                                           "max_upload_date": Array("1000".utf8), "format": Array("json".utf8),
                                                           "nojsoncallback": Array("1".utf8)],
                                                          oauthConsumerKey: nil, siteURL: "http://h/iReporter/")
        #expect(String(decoding: byDate.body, as: UTF8.self)
                == #"{"stat":"fail","code":3,"message":"Search is too broad: give text, or a narrower span of upload dates"}"#)
    }

    @Test func aSearchByUploadDateBeforeTheMigrationIsFlickrsSearchUnavailable() throws {
        final class NotIndexed: PhotoSearch {
            func newestMatches(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int) throws -> [PhotoRecord] {
                throw PhotoSearchError.uploadTimesNotIndexed
            }
            func photos(in scope: PhotoScope, oldestFirst: Bool, offset: Int, limit: Int) throws -> [PhotoRecord] { throw PhotoSearchError.uploadTimesNotIndexed }
            func countMatches(terms: [[UInt8]], scope: PhotoScope, cap: Int) throws -> Int { throw PhotoSearchError.uploadTimesNotIndexed }
            func wholeWordCounts(photoIDs: [Int64], terms: [[UInt8]]) throws -> [Int64: Int] { [:] }
        }
        let phone = try phone([])
        var services = phone.services
        services.search = NotIndexed()
        let answer = FlickrAPI(services: services).handle(["method": Array("flickr.photos.search".utf8), "min_upload_date": Array("1000".utf8),
                                                           "format": Array("json".utf8), "nojsoncallback": Array("1".utf8)],
                                                          oauthConsumerKey: nil, siteURL: "http://h/iReporter/")
        #expect(String(decoding: answer.body, as: UTF8.self).hasPrefix(#"{"stat":"fail","code":10,"message":"Sorry, searching by upload date"#))
    }

    @Test(arguments: [(DatabaseErrorCode.lockWaitTimeout, #"{"error":"The service is temporarily unavailable, please try again"}"#),
                      (.deadlock, #"{"error":"The service is temporarily unavailable, please try again"}"#),
                      (.nodeNotReady, #"{"error":"The service is temporarily unavailable, please try again"}"#),
                      (.noSuchTable, #"{"error":"Search is not available"}"#)])
    func aBusyDatabaseIsTryAgainABrokenOneIsNot(code: DatabaseErrorCode, answer: String) throws {
        final class Failing: PhotoSearch {
            let code: DatabaseErrorCode
            init(_ code: DatabaseErrorCode) { self.code = code }
            func newestMatches(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int) throws -> [PhotoRecord] {
                throw DatabaseError(code: code, message: "as the server says")
            }
            func photos(in scope: PhotoScope, oldestFirst: Bool, offset: Int, limit: Int) throws -> [PhotoRecord] {
                throw DatabaseError(code: code, message: "as the server says")
            }
            func countMatches(terms: [[UInt8]], scope: PhotoScope, cap: Int) throws -> Int { 0 }
            func wholeWordCounts(photoIDs: [Int64], terms: [[UInt8]]) throws -> [Int64: Int] { [:] }
        }
        let phone = try phone([])
        var services = phone.services
        services.search = Failing(code)
        #expect(try phone.body([("command", "search"), ("q", "sunset")], through: IReporterAPI(services: services)) == answer)
    }

    @Test func pagesFollowTheCursor() throws {
        let phone = try phone((1...7).map { (1, "beach \($0)") })
        #expect(try ids(phone, [("q", "beach"), ("count", "3")]) == ["8", "7", "6"])
        #expect(try ids(phone, [("q", "beach"), ("count", "3"), ("before", "6")]) == ["5", "4", "3"])
        #expect(try ids(phone, [("q", "beach"), ("count", "3"), ("before", "3")]) == ["2"])
    }

    @Test func relevancePutsWholeWordsFirst() throws {
        let phone = try phone([(1, "sun"), (1, "sunset"), (1, "sun and sea"), (1, "sunday sea")])
        #expect(try ids(phone, [("q", "sun sea"), ("sort", "relevance")]) == ["4", "5"])
        #expect(try ids(phone, [("q", "sun"), ("sort", "relevance")]) == ["4", "2", "5", "3"])
        #expect(try ids(phone, [("q", "sun"), ("sort", "relevance"), ("count", "2"), ("page", "2")]) == ["5", "3"])
    }

    @Test func cjkTitlesAreFoundByAnyPart() throws {
        let phone = try phone([(1, "東京タワーの夜"), (1, "京都")])
        #expect(try ids(phone, [("q", "タワー")]) == ["2"])
        #expect(try ids(phone, [("q", "京")]) == ["3", "2"])
        #expect(try ids(phone, [("q", "京都")]) == ["3"])
    }

    @Test func badInputIsAClearError() throws {
        let phone = try phone([(1, "sunset")])
        let cases: [([(String, String)], String)] = [
            ([], "Search needs at least one word (letters or digits)"),
            ([("q", "🌅 +-\"*@")], "Search needs at least one word (letters or digits)"),
            ([("q", "a b c d e f g")], "Search takes at most 6 words"),
            ([("q", String(repeating: "x", count: 201))], "Search text is too long (at most 200 bytes)"),
            ([("q", "sun"), ("sort", "oldest")], "sort must be newest or relevance"),
            ([("q", "sun"), ("count", "100000")], "count must be a number from 1 to 100"),
            ([("q", "sun"), ("count", "0")], "count must be a number from 1 to 100"),
            ([("q", "sun"), ("count", "-1")], "count must be a number from 1 to 100"),
            ([("q", "sun"), ("before", "1 OR 1=1")], "before must be a photo id"),
            ([("q", "sun"), ("sort", "relevance"), ("page", "-1")],
             "page must be a number, and relevance pages end at 500 photos"),
            ([("q", "sun"), ("sort", "relevance"), ("page", "6"), ("count", "100")],
             "page must be a number, and relevance pages end at 500 photos"),
            ([("q", "sun"), ("sort", "relevance"), ("before", "5")], "before pages the newest order; relevance pages with page"),
            ([("q", "sun"), ("page", "2")], "page pages the relevance order; newest pages with before"),
        ]
        for (fields, message) in cases {
            #expect(try phone.body([("command", "search")] + fields) == #"{"error":"\#(message)"}"#, "\(fields)")
        }
        #expect(try ids(phone, [("q", "' OR 1=1 -- sun*")]) == [], "operators are separators, every word required")
        #expect(try ids(phone, [("q", "+sunset* \"set")]) == [], "\"set\" starts no word of it")
        #expect(try ids(phone, [("q", "+sunset* \"sun")]) == ["2"])
    }
}
