import Testing
@testable import IReporterKit

/// The ordered merge of the terms' posting lists behind multi-word
/// `search` on MariaDB: the same photos as checking every photo, newest
/// first, and reading little when the page is found early.
struct PostingIntersectionTests {
    /// Words' lists as the index holds them, read the way MariaDB answers.
    private final class Index {
        var lists: [[UInt8]: [Int64]] = [:]
        var reads: [(words: Int, limit: Int)] = []

        func add(_ word: String, _ ids: some Sequence<Int64>) {
            lists[Array(word.utf8), default: []] += ids
            lists[Array(word.utf8)]!.sort(by: >)
        }

        func read(_ words: [(word: [UInt8], below: Int64)], _ limit: Int) -> [[Int64]] {
            reads.append((words.count, limit))
            return words.map { word in Array((lists[word.word] ?? []).filter { $0 < word.below }.prefix(limit)) }
        }

        /// What checking every photo finds.
        func expected(_ terms: [[String]], before: Int64, limit: Int) -> [Int64] {
            let sets = terms.map { term in Set(term.flatMap { lists[Array($0.utf8)] ?? [] }) }
            let all = sets.dropFirst().reduce(sets[0]) { $0.intersection($1) }
            return Array(all.filter { $0 < before }.sorted(by: >).prefix(limit))
        }
    }

    private func newest(_ index: Index, _ terms: [[String]], before: Int64 = .max, limit: Int,
                        firstChunk: Int = PostingIntersection.firstChunk) throws -> (ids: [Int64], rowsRead: Int) {
        var merge = PostingIntersection(terms: terms.map { $0.map { Array($0.utf8) } }, before: before,
                                        firstChunk: firstChunk, read: index.read)
        let ids = try merge.newest(limit: limit)
        return (ids, merge.rowsRead)
    }

    @Test func findsWhatCheckingEveryPhotoFinds() throws {
        var random = SystemRandomNumberGenerator()
        for round in 0..<200 {
            let index = Index()
            let words = ["a", "b", "c", "d", "e"]
            for word in words {
                let share = Int64.random(in: 2...6, using: &random)
                index.add(word, (1...400).filter { _ in Int64.random(in: 0..<share, using: &random) == 0 })
            }
            // Terms of one or two words (a prefix starting several).
            let terms = (0..<Int.random(in: 2...3, using: &random)).map { _ in
                Array(words.shuffled(using: &random).prefix(Int.random(in: 1...2, using: &random)))
            }
            let before = Bool.random(using: &random) ? Int64.max : Int64.random(in: 1...400, using: &random)
            let limit = Int.random(in: 1...60, using: &random)
            let firstChunk = [1, 3, 64][round % 3]
            let found = try newest(index, terms, before: before, limit: limit, firstChunk: firstChunk).ids
            #expect(found == index.expected(terms, before: before, limit: limit), "\(terms) before \(before) limit \(limit)")
        }
    }

    @Test func wordsThatNeverMeetAreReadOnceInGrowingChunks() throws {
        let index = Index()
        index.add("night", stride(from: 2, through: 200_000, by: 2))   // 100,000 photos
        index.add("city", stride(from: 140_001, through: 200_001, by: 2))  // 30,001 photos, the newer ones
        let (ids, rowsRead) = try newest(index, [["night"], ["city"]], limit: 50)
        #expect(ids.isEmpty)
        #expect(rowsRead <= 30_001 + 30_000 + 2 * PostingIntersection.maxChunk, "the longer list read only down to where the shorter ended")
        #expect(index.reads.count < 40, "\(index.reads.count) round trips")
        #expect(index.reads.allSatisfy { $0.limit <= PostingIntersection.maxChunk })
    }

    @Test func aPageFoundAmongTheNewestReadsOneChunkOfEach() throws {
        let index = Index()
        index.add("cafe", 1...100_000)
        index.add("paris", stride(from: 2, through: 100_000, by: 2))
        let (ids, rowsRead) = try newest(index, [["cafe"], ["paris"]], limit: 20)
        #expect(ids == Array(stride(from: 100_000, through: 99_962, by: -2)))
        #expect(rowsRead <= 2 * PostingIntersection.firstChunk)
        #expect(index.reads.count == 2)
    }

    @Test func keepNarrowsEachBatchUntilThePageIsFull() throws {
        let index = Index()
        index.add("sun", 1...1000)
        index.add("sea", 1...1000)
        var merge = PostingIntersection(terms: [[Array("sun".utf8)], [Array("sea".utf8)]], before: .max, read: index.read)
        #expect(try merge.newest(limit: 5) { $0.filter { $0 % 100 == 0 } } == [1000, 900, 800, 700, 600])
    }

    @Test func aMergeStopsAtItsRowsAndSaysSo() throws {
        let index = Index()
        index.add("night", stride(from: 2, through: 200_000, by: 2))
        index.add("city", stride(from: 1, through: 200_001, by: 2))
        var merge = PostingIntersection(terms: [[Array("night".utf8)], [Array("city".utf8)]], before: .max, maxRowsRead: 10_000,
                                        read: index.read)
        #expect(try merge.newest(limit: 50).isEmpty)
        #expect(merge.exhausted)
        #expect(merge.rowsRead <= 10_000, "no read goes past the budget: \(merge.rowsRead)")
        #expect(merge.rowsRead > 9_000, "the budget is used, not given up early: \(merge.rowsRead)")
    }

    @Test func theBudgetIsSharedByAPrefixsWords() throws {
        // One term of 8 words (a prefix), each with photos that never meet the other term's.
        let index = Index()
        let words = (0..<8).map { "sun\($0)" }
        for (n, word) in words.enumerated() { index.add(word, stride(from: Int64(n) * 2, through: 40_000, by: 16)) }
        index.add("sea", stride(from: 1, through: 40_001, by: 2))
        var merge = PostingIntersection(terms: [words.map { Array($0.utf8) }, [Array("sea".utf8)]], before: .max,
                                        maxRowsRead: 1_000, read: index.read)
        #expect(try merge.newest(limit: 10).isEmpty)
        #expect(merge.exhausted)
        #expect(merge.rowsRead <= 1_000)
        #expect(index.reads.allSatisfy { $0.limit * $0.words <= 1_000 }, "each read within what is left")
    }

    @Test func aPageFoundWithinTheBudgetIsNotExhausted() throws {
        let index = Index()
        index.add("cafe", 1...100_000)
        index.add("paris", stride(from: 2, through: 100_000, by: 2))
        var merge = PostingIntersection(terms: [[Array("cafe".utf8)], [Array("paris".utf8)]], before: .max, maxRowsRead: 200,
                                        read: index.read)
        #expect(try merge.newest(limit: 20) == Array(stride(from: 100_000, through: 99_962, by: -2)))
        #expect(!merge.exhausted)
        // The newest matches down to where it stopped, when the rows run out mid-page.
        var short = PostingIntersection(terms: [[Array("cafe".utf8)], [Array("paris".utf8)]], before: .max, maxRowsRead: 100,
                                        read: index.read)
        let found = try short.newest(limit: 50)
        #expect(short.exhausted)
        #expect(found == Array(stride(from: 100_000, through: 100_000 - Int64(found.count - 1) * 2, by: -2)))
        #expect(short.rowsRead <= 100)
        #expect(found.count >= 25, "the rows shared between the words: \(found.count)")
    }
}
