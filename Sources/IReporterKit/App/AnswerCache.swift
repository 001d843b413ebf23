/// A worker's recently rendered answers by question (`search`, Flickr's
/// photo lists): a question asked again while nothing changed is answered
/// with the same bytes, with no store question and no rendering.
///
/// The rules of `CachedPhotoSearch`, whose found photos these answers show:
/// - Read-your-writes: every upload, deletion, vote and comment through any
///   process bumps the shared stream generation; an answer is only served
///   for the generation read before it was made.
/// - Changes behind our back show within `maxAgeMillis` (0: off).
/// - At most `maxBytes` of answers; when full, the older half goes.
final class AnswerCache<Key: Hashable, Answer: KeptAnswer> {
    private struct Entry {
        var body: Answer
        var madeAt: Int64
        var order: Int
    }

    private let counters: any SharedCounters
    private let maxAgeMillis: Int64
    private let clock: any TimeSource
    private let maxBytes: Int
    private var entries: [Key: Entry] = [:]
    private var bytes = 0
    private var generation: Int64 = -1
    private var made = 0

    init(counters: any SharedCounters, maxAgeMillis: Int64, maxBytes: Int = 4 << 20, clock: any TimeSource = MonotonicClock()) {
        self.counters = counters
        self.maxAgeMillis = maxAgeMillis
        self.clock = clock
        self.maxBytes = maxBytes
    }

    /// The answer kept for `key`, else `make`'s; kept when `make` says so
    /// (a failure is not).
    func answer(for key: Key, _ make: () throws -> (body: Answer, keep: Bool)) rethrows -> Answer {
        guard maxAgeMillis > 0 else { return try make().body }
        // Counters out of reach (Redis down): nothing kept is trusted, nothing new kept.
        guard let now = try? counters.streamGeneration else {
            forget()
            return try make().body
        }
        if now != generation {
            forget()
            generation = now
        } else if let entry = entries[key], clock.now.millis - entry.madeAt < maxAgeMillis {
            return entry.body
        }
        let answer = try make()
        if answer.keep, answer.body.keptBytes <= maxBytes / 8 { keep(answer.body, for: key) }
        return answer.body
    }

    private func keep(_ body: Answer, for key: Key) {
        if bytes + body.keptBytes > maxBytes {
            let middle = entries.values.map(\.order).sorted()[entries.count / 2]
            entries = entries.filter { $0.value.order >= middle }
            bytes = entries.values.reduce(0) { $0 + $1.body.keptBytes }
        }
        made += 1
        bytes += body.keptBytes - (entries[key]?.body.keptBytes ?? 0)
        entries[key] = Entry(body: body, madeAt: clock.now.millis, order: made)
    }

    private func forget() {
        entries.removeAll(keepingCapacity: true)
        bytes = 0
        generation = -1
    }
}

/// What an `AnswerCache` keeps: its bytes count against the cache's bound.
protocol KeptAnswer {
    var keptBytes: Int { get }
}

extension Array: KeptAnswer where Element == UInt8 {
    var keptBytes: Int { count }
}
