/// A worker's recent `search` answers, kept as the stream's are
/// (`StreamCache`): a popular query asked again costs no database round
/// trip while nothing changed.
///
/// - Read-your-writes: every upload, deletion, vote and comment through any
///   process of the installation bumps the shared stream generation, and
///   an answer is only served for the generation it was found under.
/// - Changes behind our back (the PHP version, an SQL console, another
///   installation on the same database) show within `maxAgeMillis`.
/// - At most `capacity` answers; when full, the oldest half goes. 0 ms
///   (`search_cache_ms = 0`) turns it off.
public final class CachedPhotoSearch: PhotoSearch {
    private enum Question: Hashable {
        case newest(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int)
        case listed(scope: PhotoScope, oldestFirst: Bool, offset: Int, limit: Int)
        case count(terms: [[UInt8]], scope: PhotoScope, cap: Int)
        case wholeWords(photoIDs: [Int64], terms: [[UInt8]])
    }

    private enum Answer {
        case photos([PhotoRecord])
        case count(Int)
        case counts([Int64: Int])
    }

    private struct Entry {
        var answer: Answer
        var loadedAt: Int64
        var order: Int
    }

    private let store: any PhotoSearch
    private let counters: any SharedCounters
    private let maxAgeMillis: Int64
    private let clock: any TimeSource
    private let capacity: Int
    private var entries: [Question: Entry] = [:]
    private var generation: Int64 = -1
    private var loads = 0

    /// Ages are read on `clock`.
    public init(_ store: any PhotoSearch, counters: any SharedCounters, maxAgeMillis: Int64, capacity: Int = 512,
                clock: any TimeSource = MonotonicClock()) {
        self.store = store
        self.counters = counters
        self.maxAgeMillis = maxAgeMillis
        self.clock = clock
        self.capacity = capacity
    }

    public func newestMatches(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int) throws -> [PhotoRecord] {
        let key = Question.newest(terms: terms, scope: scope, before: before, limit: limit)
        if case .photos(let photos)? = cached(key) { return photos }
        let photos = try store.newestMatches(terms: terms, scope: scope, before: before, limit: limit)
        keep(.photos(photos), for: key)
        return photos
    }

    public func photos(in scope: PhotoScope, oldestFirst: Bool, offset: Int, limit: Int) throws -> [PhotoRecord] {
        let key = Question.listed(scope: scope, oldestFirst: oldestFirst, offset: offset, limit: limit)
        if case .photos(let photos)? = cached(key) { return photos }
        let photos = try store.photos(in: scope, oldestFirst: oldestFirst, offset: offset, limit: limit)
        keep(.photos(photos), for: key)
        return photos
    }

    public func countMatches(terms: [[UInt8]], scope: PhotoScope, cap: Int) throws -> Int {
        let key = Question.count(terms: terms, scope: scope, cap: cap)
        if case .count(let count)? = cached(key) { return count }
        let count = try store.countMatches(terms: terms, scope: scope, cap: cap)
        keep(.count(count), for: key)
        return count
    }

    public func wholeWordCounts(photoIDs: [Int64], terms: [[UInt8]]) throws -> [Int64: Int] {
        let key = Question.wholeWords(photoIDs: photoIDs, terms: terms)
        if case .counts(let counts)? = cached(key) { return counts }
        let counts = try store.wholeWordCounts(photoIDs: photoIDs, terms: terms)
        keep(.counts(counts), for: key)
        return counts
    }

    private func cached(_ key: Question) -> Answer? {
        guard maxAgeMillis > 0 else { return nil }
        // Counters out of reach (Redis down): nothing kept is trusted, nothing new kept.
        guard let now = try? counters.streamGeneration else {
            entries.removeAll(keepingCapacity: true)
            generation = -1
            return nil
        }
        if now != generation {
            entries.removeAll(keepingCapacity: true)
            generation = now
            return nil
        }
        guard let entry = entries[key], clock.now.millis - entry.loadedAt < maxAgeMillis else { return nil }
        return entry.answer
    }

    /// Kept under the generation read before the store was asked: a change
    /// meanwhile makes the next question ask again.
    private func keep(_ answer: Answer, for key: Question) {
        guard maxAgeMillis > 0, generation >= 0 else { return }
        if entries.count >= capacity {
            let oldest = entries.values.map(\.order).sorted()[(entries.count + 1) / 2 - 1]
            entries = entries.filter { $0.value.order > oldest }
        }
        loads += 1
        entries[key] = Entry(answer: answer, loadedAt: clock.now.millis, order: loads)
    }
}
