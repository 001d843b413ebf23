import Testing
@testable import IReporterKit

/// The refresher beside the workers: a polled home is made again from the
/// stores shortly before it ends, found there by the worker whose copy
/// ended, and no longer once nobody asks.
struct AnswerRefresherTests {
    @Test func aPolledHomeIsMadeAgainBeforeItEndsAndOnlyWhileAsked() throws {
        var policy = AppHarness.cheapPolicy
        policy.streamCacheMillis = 1000
        let phone = try AppHarness(policy: policy, sharedAnswers: SharedAnswerTable(slots: 8))
        try phone.send([("command", "register"), ("username", "bob"), ("password", "p")])
        let refresher = try #require(AnswerRefresher(services: phone.services))
        func add(_ title: String) throws {
            _ = try phone.photos.add(userID: 1, title: Array(title.utf8), publish: { _ in }, unpublish: { _ in })
        }
        func home() throws -> [String] {
            try phone.body([("command", "feed")]).split(separator: #""title":""#).dropFirst().map { String($0.prefix { $0 != "\"" }) }
        }
        try add("first")
        phone.counters.bumpStreamGeneration() // as an upload does
        #expect(try home() == ["first"])
        #expect(refresher.refreshDue() == 0, "just made")
        try add("second") // behind the caches' back: shows within stream_cache_ms
        phone.clock.advance(byMillis: 999)
        #expect(refresher.refreshDue() == 1)
        try add("third")
        phone.clock.advance(byMillis: 1)
        #expect(try home() == ["second", "first"], "the worker's copy ended: the answer made ahead, not one made now")
        phone.clock.advance(byMillis: 999)
        #expect(refresher.refreshDue() == 1, "asked since it was made: made again")
        phone.clock.advance(byMillis: 1000)
        #expect(refresher.refreshDue() == 0, "nobody asked since")
        #expect(try home() == ["third", "second", "first"], "the next request makes its own")
    }

    @Test func noRefresherWithoutTheTableOrTheCaches() throws {
        #expect(AnswerRefresher(services: try AppHarness().services) == nil, "no shared table (CGI, mod_fcgid)")
        var policy = AppHarness.cheapPolicy
        policy.streamCacheMillis = 0
        #expect(AnswerRefresher(services: try AppHarness(policy: policy, sharedAnswers: SharedAnswerTable(slots: 8)).services) == nil)
    }

    @Test func aFeedQuestionReadsBackFromItsName() {
        for question in [FeedCommand.Question(viewer: 7, page: PageCursor(count: 50), extras: []),
                         FeedCommand.Question(viewer: 1, page: PageCursor(since: 12, before: 99, count: 20), extras: [.likes, .secret, .description]),
                         FeedCommand.Question(viewer: 1, page: PageCursor(since: 12, count: 20, fromSince: true), extras: [])] {
            #expect(FeedCommand.Question(sharedKey: question.sharedKey) == question)
        }
        for name in ["page 7 20 http://x/\n", "feed 7 since 0 9 50", "feed 7 since 0 9 50 likes,password", "feed x since 0 9 50 ",
                     "feed 7 0 9 50 ", "feed 7 before 0 9 50 ", ""] {
            #expect(FeedCommand.Question(sharedKey: Array(name.utf8)) == nil, "\(name)")
        }
    }
}
