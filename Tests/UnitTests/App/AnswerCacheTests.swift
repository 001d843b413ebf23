import Testing
@testable import IReporterKit

/// A worker's answer cache, alone and with the host's shared table: an
/// answer is made once per generation and age whichever worker is asked.
struct AnswerCacheTests {
    /// Two workers' caches over one table and one set of counters.
    final class Host {
        let counters = InMemoryCounters()
        let clock = ManualClock()
        let table = SharedAnswerTable(slots: 8)
        var made = 0

        func worker(shared: Bool = true) -> AnswerCache<String, [UInt8]> {
            AnswerCache(counters: counters, maxAgeMillis: 1000, clock: clock, table: shared ? table : nil,
                        sharedKey: { Array($0.utf8) })
        }

        func ask(_ cache: AnswerCache<String, [UInt8]>, _ question: String) -> String {
            String(decoding: cache.answer(for: question) {
                made += 1
                return (Array("\(question) #\(made)".utf8), true)
            }, as: UTF8.self)
        }
    }

    @Test func theHostsWorkersMakeAnAnswerOnce() {
        let host = Host()
        let workers = (0..<4).map { _ in host.worker() }
        #expect(workers.map { host.ask($0, "home 7") } == Array(repeating: "home 7 #1", count: 4))
        #expect(host.ask(workers[2], "home 8") == "home 8 #2")
        #expect(host.made == 2)
    }

    /// The questions' bytes count against the bound: a client's megabyte
    /// parameters, each with a small answer, do not pile up uncounted.
    @Test func bigQuestionsCountAgainstTheBound() {
        let cache = AnswerCache<String, [UInt8]>(counters: InMemoryCounters(), maxAgeMillis: 1000, maxBytes: 1 << 20, clock: ManualClock())
        var made = 0
        func ask(_ question: String) { _ = cache.answer(for: question) { made += 1; return (Array("[]".utf8), true) } }
        let questions = (0..<64).map { String(repeating: "\($0 % 10)", count: 64 << 10) + "\($0)" }
        for question in questions { ask(question) }
        #expect(made == 64)
        ask(questions[0])
        #expect(made == 65, "the oldest went to make room")
        for _ in 0..<2 { ask(String(repeating: "x", count: 200 << 10)) }
        #expect(made == 67, "a question over an eighth of the bound is not kept")
    }

    @Test func withoutTheTableEachWorkerMakesItsOwn() {
        let host = Host()
        let workers = (0..<4).map { _ in host.worker(shared: false) }
        #expect(workers.map { host.ask($0, "home 7") } == ["home 7 #1", "home 7 #2", "home 7 #3", "home 7 #4"])
    }

    @Test func aChangeMakesEveryWorkerAskAgain() {
        let host = Host()
        let (first, second) = (host.worker(), host.worker())
        #expect(host.ask(first, "home 7") == "home 7 #1")
        host.counters.bumpStreamGeneration()
        #expect(host.ask(second, "home 7") == "home 7 #2")
        #expect(host.ask(first, "home 7") == "home 7 #2", "the first finds the second's, made after the change")
    }

    /// An answer found in the table is kept with the age it has: no worker
    /// serves an answer older than the bound.
    @Test func anAnswerFoundInTheTableKeepsItsAge() {
        let host = Host()
        let (first, second) = (host.worker(), host.worker())
        #expect(host.ask(first, "home 7") == "home 7 #1")
        host.clock.advance(byMillis: 600)
        #expect(host.ask(second, "home 7") == "home 7 #1")
        host.clock.advance(byMillis: 149)
        #expect(host.ask(second, "home 7") == "home 7 #1", "749 ms old: within every key's lifetime")
        host.clock.advance(byMillis: 251)
        #expect(host.ask(second, "home 7") == "home 7 #2", "1000 ms old: made again")
        #expect(host.ask(first, "home 7") == "home 7 #2", "and found by the first")
    }

    /// Answers made together are made again apart: each key lives between
    /// three quarters of the bound and all of it, fixed by its name.
    @Test func answersMadeTogetherAreMadeAgainApart() {
        let host = Host()
        let worker = host.worker()
        let questions = (0..<40).map { "home \($0)" }
        for question in questions { _ = host.ask(worker, question) }
        var madeAgainAt: [String: Int64] = [:]
        for age in Int64(1)...1000 {
            host.clock.advance(byMillis: 1)
            for question in questions where madeAgainAt[question] == nil {
                if !host.ask(worker, question).hasSuffix("#\(questions.firstIndex(of: question)! + 1)") { madeAgainAt[question] = age }
            }
        }
        #expect(madeAgainAt.count == questions.count, "every answer is made again within the bound")
        #expect(madeAgainAt.values.allSatisfy { (750...1000).contains($0) }, "\(madeAgainAt)")
        #expect(Set(madeAgainAt.values).count >= 10, "at many moments, not at once: \(madeAgainAt.values.sorted())")
    }

    /// What the refresher makes again goes in the table only: each worker
    /// serves its own copy for its lifetime, then finds the new one there
    /// instead of making it.
    @Test func anAnswerMadeAgainAheadIsFoundWhenTheWorkersCopyEnds() {
        let host = Host()
        let (worker, refresher) = (host.worker(), host.worker())
        #expect(host.ask(worker, "home 7") == "home 7 #1")
        host.clock.advance(byMillis: 700)
        refresher.remake("home 7") { Array("home 7 ahead".utf8) }
        #expect(host.ask(worker, "home 7") == "home 7 #1", "its own copy, still within its lifetime")
        host.clock.advance(byMillis: 300)
        #expect(host.ask(worker, "home 7") == "home 7 ahead", "1000 ms: the one made ahead, 300 ms old")
        #expect(host.made == 1)
        host.counters.bumpStreamGeneration()
        refresher.remake("home 7") { Array("home 7 under the new generation".utf8) }
        host.counters.bumpStreamGeneration()
        #expect(host.ask(worker, "home 7") == "home 7 #2", "made under a generation since gone: not served")
    }

    @Test func withTheCountersOutOfReachNothingIsKept() {
        let host = Host()
        let counters = UnreachableCounters()
        let cache = AnswerCache<String, [UInt8]>(counters: counters, maxAgeMillis: 1000, clock: host.clock, table: host.table,
                                                  sharedKey: { Array($0.utf8) })
        #expect(host.ask(cache, "home 7") == "home 7 #1")
        #expect(host.ask(cache, "home 7") == "home 7 #2")
        #expect(host.ask(host.worker(), "home 7") == "home 7 #3", "nothing was put in the table either")
    }
}

/// Counters in a store that cannot be reached (Redis down).
final class UnreachableCounters: SharedCounters, @unchecked Sendable {
    struct Unreachable: Error {}
    let clock: any TimeSource = ManualClock()
    func blockedMillis(_ key: String, at now: Instant) throws -> Int64? { throw Unreachable() }
    func recordFailure(_ key: String, threshold: Int64, maxBlockSeconds: Int64, at now: Instant) throws -> Int64 { throw Unreachable() }
    func forgive(_ key: String, at now: Instant) throws { throw Unreachable() }
    func reset(_ key: String) throws -> Int64 { throw Unreachable() }
    func use(_ key: String, limit: Int64, windowSeconds: Int64, at now: Instant) throws -> WindowUse { throw Unreachable() }
    var streamGeneration: Int64 { get throws { throw Unreachable() } }
    func bumpStreamGeneration() throws { throw Unreachable() }
}

/// A timeline's rendered page goes through the host's table as bytes.
struct SharedPageTests {
    @Test func aPageReadsBackAsItWasKept() throws {
        let page = TimelineEndpoints.RenderedPage(body: Array("[{\"id\":\"9\"}]".utf8), ids: [9, 7, Int64.max, -1])
        let read = try #require(TimelineEndpoints.RenderedPage(sharedBytes: page.sharedBytes))
        #expect(read.body == page.body && read.ids == page.ids)
        let empty = try #require(TimelineEndpoints.RenderedPage(sharedBytes: TimelineEndpoints.RenderedPage(body: [], ids: []).sharedBytes))
        #expect(empty.body.isEmpty && empty.ids.isEmpty)
        #expect(TimelineEndpoints.RenderedPage(sharedBytes: Array(page.sharedBytes.prefix(20))) == nil, "cut short")
        #expect(TimelineEndpoints.RenderedPage(sharedBytes: [1, 2, 3]) == nil)
    }

    /// The key holds the whole answer the page was rendered from.
    @Test func pagesOfOtherAnswersAreOthers() {
        let host = AnswerCacheTests.Host()
        func page(_ answer: String) -> TimelineEndpoints.NewestPage {
            TimelineEndpoints.NewestPage(viewer: 7, siteURL: "http://x", limit: 20, answer: Array(answer.utf8))
        }
        var rendered = 0
        let workers = (0..<2).map { _ in
            AnswerCache<TimelineEndpoints.NewestPage, TimelineEndpoints.RenderedPage>(
                counters: host.counters, maxAgeMillis: 1000, clock: host.clock, table: host.table, sharedKey: \.sharedKey)
        }
        func ask(_ worker: Int, _ answer: String) -> [UInt8] {
            workers[worker].answer(for: page(answer)) {
                rendered += 1
                return (TimelineEndpoints.RenderedPage(body: Array("\(answer) #\(rendered)".utf8), ids: [Int64(rendered)]), true)
            }.body
        }
        #expect(ask(0, "a") == Array("a #1".utf8))
        #expect(ask(1, "a") == Array("a #1".utf8), "the other worker's rendering")
        #expect(ask(1, "b") == Array("b #2".utf8))
        #expect(ask(0, "ab") == Array("ab #3".utf8))
    }
}

extension String: KeptKey {
    public var keptBytes: Int { utf8.count }
}
