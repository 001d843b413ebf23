import Testing
@testable import IReporterKit

/// The table the workers of one supervisor keep answers in: what one keeps
/// another finds, only for its generation and age, and it stays bounded.
struct SharedAnswerTableTests {
    /// Two views of one memory, as two forked workers have.
    static func twoWorkers(slots: Int = 8) -> (SharedAnswerTable, SharedAnswerTable) {
        let memory = sharedMemory(bytes: SharedAnswerTable.bytes(slots: slots), for: "a test's answers")
        return (SharedAnswerTable(memory: memory, slots: slots, initialize: true),
                SharedAnswerTable(memory: memory, slots: slots, initialize: false))
    }

    @Test func whatOneWorkerKeepsAnotherFindsForItsGenerationAndAge() throws {
        let (first, second) = Self.twoWorkers()
        let key = Array("feed 7 0 0 20 likes".utf8)
        first.keep(Array("{\"result\":[]}".utf8), for: key, generation: 3, madeAt: 1000)
        let found = try #require(second.find(key, generation: 3, madeSince: 1000))
        #expect(String(decoding: found.body, as: UTF8.self) == "{\"result\":[]}")
        #expect(found.madeAt == 1000)
        #expect(second.find(key, generation: 4, madeSince: 0) == nil, "another generation")
        #expect(second.find(key, generation: 3, madeSince: 1001) == nil, "too old")
        #expect(second.find(Array("feed 8 0 0 20 likes".utf8), generation: 3, madeSince: 0) == nil, "another question")
        #expect(second.find(Array("feed 7 0 0 20 like".utf8), generation: 3, madeSince: 0) == nil, "a key's prefix")
        first.keep([1], for: [], generation: 3, madeAt: 1000)
        #expect(second.find([], generation: 3, madeSince: 0) == nil, "no answer has an empty name")
    }

    /// What the refresher makes again: answers a request asked for since
    /// they were made, near or just past the end of their lifetime, of the
    /// current generation, named with the prefix.
    @Test func dueAnswersAreTheAskedOnesNearTheirEnd() throws {
        let (worker, refresher) = Self.twoWorkers()
        let home = Array("feed 7 0 9 50 ".utf8)
        let lifetime = SharedAnswerTable.lifetime(named: home, maxAge: 1000)
        #expect((750...1000).contains(lifetime))
        func due(at now: Int64, generation: Int64 = 1) -> [[UInt8]] {
            refresher.due(prefix: Array("feed ".utf8), generation: generation, now: now, maxAge: 1000, lead: 125)
        }
        worker.keep([1], for: home, generation: 1, madeAt: 0)
        worker.keep([2], for: Array("page 7".utf8), generation: 1, madeAt: 0)
        #expect(due(at: lifetime - 126).isEmpty, "not yet")
        #expect(due(at: lifetime - 125) == [home], "made for a request: asked")
        #expect(due(at: lifetime - 125, generation: 2).isEmpty, "another generation")
        #expect(due(at: 1999) == [home] && due(at: 2000).isEmpty, "long expired: left to the requests")
        refresher.keep([3], for: home, generation: 1, madeAt: 900, asked: false)
        #expect(due(at: 900 + lifetime).isEmpty, "made ahead, not asked since")
        _ = worker.find(home, generation: 1, madeSince: 0)
        #expect(due(at: 900 + lifetime).isEmpty, "found by one who is no request")
        #expect(try #require(worker.find(home, generation: 1, madeSince: 0, askedAt: 950)).body == [3])
        #expect(due(at: 900 + lifetime) == [home], "asked since it was made")
        refresher.keep([4], for: home, generation: 1, madeAt: 1000, asked: false)
        #expect(due(at: 1000 + lifetime).isEmpty, "made again: asked before that")
    }

    @Test func aNewAnswerReplacesTheKeysOwn() throws {
        let (first, second) = Self.twoWorkers()
        let key = Array("feed 7".utf8)
        first.keep([1, 2, 3], for: key, generation: 1, madeAt: 10)
        second.keep([4, 5], for: key, generation: 2, madeAt: 20)
        #expect(first.find(key, generation: 1, madeSince: 0) == nil)
        #expect(try #require(first.find(key, generation: 2, madeSince: 0)).body == [4, 5])
        second.keep([], for: key, generation: 2, madeAt: 30)
        #expect(try #require(first.find(key, generation: 2, madeSince: 0)).body == [], "an empty answer is an answer")
    }

    @Test func anAnswerBiggerThanASlotIsNotShared() {
        let (first, second) = Self.twoWorkers()
        let key = Array("feed 7".utf8)
        first.keep([UInt8](repeating: 65, count: SharedAnswerTable.capacity - key.count + 1), for: key, generation: 1, madeAt: 10)
        #expect(second.find(key, generation: 1, madeSince: 0) == nil)
        first.keep([UInt8](repeating: 65, count: SharedAnswerTable.capacity - key.count), for: key, generation: 1, madeAt: 10)
        #expect(second.find(key, generation: 1, madeSince: 0)?.body.count == SharedAnswerTable.capacity - key.count)
    }

    @Test func aSetHoldsAsManyAnswersAsItHasWays() {
        let (first, second) = Self.twoWorkers(slots: SharedAnswerTable.ways)
        let keys = (0..<SharedAnswerTable.ways).map { Array("page \($0)".utf8) }
        for key in keys { first.keep(key, for: key, generation: 1, madeAt: 5) }
        #expect(keys.allSatisfy { second.find($0, generation: 1, madeSince: 0)?.body == $0 })
    }

    @Test func aFullTableKeepsTheNewestAnswers() {
        let slots = 2 * SharedAnswerTable.ways
        let (first, second) = Self.twoWorkers(slots: slots)
        let keys = (0..<100).map { Array("feed \($0)".utf8) }
        for (index, key) in keys.enumerated() { first.keep(Array(key.reversed()), for: key, generation: 1, madeAt: Int64(index)) }
        let kept = keys.indices.filter { second.find(keys[$0], generation: 1, madeSince: 0)?.body == Array(keys[$0].reversed()) }
        #expect(kept.count <= slots)
        #expect(kept.contains(99), "the last one kept is there")
        #expect(kept.allSatisfy { $0 >= 100 - 4 * slots }, "only recent answers stay: \(kept)")
    }
}
