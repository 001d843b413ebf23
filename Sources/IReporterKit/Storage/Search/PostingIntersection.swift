/// The newest photos that have every term, found by merging the terms'
/// posting lists (each word's photos, newest first, read in chunks)
/// instead of looking up the other terms for each photo of the rarest:
/// two common words that seldom meet cost two sequential reads of the
/// index, not one random lookup per photo of the rarer (bench/results/
/// 2026-12-01-search-2/why.md).
///
/// A term is the words it starts (a prefix): its photos are the union of
/// its words' lists. Each list is read downwards, chunk by chunk, so each
/// word is known from its "floor" up to `before`, and a term from the
/// highest floor of its words. Above the highest floor of all terms every
/// term is known: the photos all of them hold there are final and leave
/// newest first. Then the terms that hold that floor up are read further.
/// Pure logic: the store reads the chunks (`read`).
struct PostingIntersection {
    /// For each (word, below): at most `limit` of the word's photos below
    /// it, newest first; one answer per word, in order.
    typealias Read = (_ words: [(word: [UInt8], below: Int64)], _ limit: Int) throws -> [[Int64]]

    /// The first chunk of a word, and the largest: each further read of a
    /// word is 4 times the last, so a word of 100,000 photos is read in a
    /// handful of round trips while a page found early reads little.
    static let firstChunk = 64
    static let maxChunk = 16384

    private struct Word {
        let word: [UInt8]
        /// Read and not yet passed, newest first.
        var ids: [Int64] = []
        /// Every photo of the word from here up to `before` has been read;
        /// `Int64.min` once the list ended.
        var floor: Int64
        var chunk: Int
    }

    private var terms: [[Word]]
    private let read: Read
    /// Index rows it may read in all: no read goes past it (each word of a
    /// read gets at most its share of what is left).
    private let maxRowsRead: Int
    /// Index rows read so far (what the merge cost).
    private(set) var rowsRead = 0
    /// The merge stopped because reading further would pass `maxRowsRead`:
    /// what it answered is the newest matches down to where it had read,
    /// not all of them.
    private(set) var exhausted = false

    /// `terms`: each term's words (at least one each); photos below `before`.
    init(terms: [[[UInt8]]], before: Int64, firstChunk: Int = PostingIntersection.firstChunk, maxRowsRead: Int = .max,
         read: @escaping Read) {
        self.terms = terms.map { $0.map { Word(word: $0, floor: before, chunk: firstChunk) } }
        self.read = read
        self.maxRowsRead = maxRowsRead
    }

    /// The next photos that every term holds, newest first: at least one
    /// unless the lists ended or the rows to read are spent (then empty).
    mutating func next() throws -> [Int64] {
        while true {
            let floors = terms.map(Self.floor)
            let frontier = floors.max() ?? Int64.min
            // Known by every term: the ids at or above the frontier.
            var common: Set<Int64>? = nil
            for index in terms.indices {
                var held = Set<Int64>()
                for w in terms[index].indices {
                    let known = terms[index][w].ids.prefix { $0 >= frontier }
                    held.formUnion(known)
                    terms[index][w].ids.removeFirst(known.count)
                }
                common = common.map { $0.intersection(held) } ?? held
            }
            let found = (common ?? []).sorted(by: >)
            if !found.isEmpty || frontier == Int64.min { return found }
            // A term read to its end and passed: nothing further can match.
            if terms.contains(where: { $0.allSatisfy { $0.floor == Int64.min && $0.ids.isEmpty } }) { return [] }
            guard try readFurther(floors: floors, frontier: frontier) else {
                exhausted = true
                return []
            }
        }
    }

    /// The newest `limit` photos that every term holds and `keep` keeps
    /// (given each batch, it answers those that meet another condition:
    /// the author, a term read otherwise). Fewer when the lists end, or
    /// when the rows are spent (`exhausted`).
    mutating func newest(limit: Int, keep: ([Int64]) throws -> [Int64] = { $0 }) throws -> [Int64] {
        var result: [Int64] = []
        while result.count < limit {
            let batch = try next()
            if batch.isEmpty { break }
            result += try keep(batch).prefix(limit - result.count)
        }
        return result
    }

    private static func floor(_ term: [Word]) -> Int64 { term.map(\.floor).max() ?? Int64.min }

    /// Reads further the words that hold the frontier up: of each term at
    /// the frontier, its words not yet below every other term's floor
    /// (reading those deeper would not move the frontier now). Each word
    /// read gets at most an equal share of the rows left among all the
    /// words, so that one term's growing chunks never take what the others
    /// need to meet it. False, reading nothing, when the share is no row.
    private mutating func readFurther(floors: [Int64], frontier: Int64) throws -> Bool {
        let words = terms.map(\.count).reduce(0, +)
        for index in terms.indices where floors[index] == frontier {
            let others = floors.enumerated().filter { $0.offset != index }.map(\.element).max() ?? Int64.min
            let due = terms[index].indices.filter { terms[index][$0].floor >= others && terms[index][$0].floor != Int64.min }
            let share = (maxRowsRead - rowsRead) / max(words, 1)
            guard share > 0 else { return false }
            let limit = min(due.map { terms[index][$0].chunk }.max() ?? 0, share)
            let answers = try read(due.map { (terms[index][$0].word, terms[index][$0].floor) }, limit)
            for (w, ids) in zip(due, answers) {
                rowsRead += ids.count
                terms[index][w].ids += ids
                terms[index][w].floor = ids.count < limit ? Int64.min : ids[ids.count - 1]
                terms[index][w].chunk = min(limit * 4, Self.maxChunk)
            }
        }
        return true
    }
}
