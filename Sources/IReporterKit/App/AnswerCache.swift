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
///
/// With a `SharedAnswerTable`, what one worker made is found there by the
/// host's other workers under the same rules, and kept by them with the
/// age it has.
final class AnswerCache<Key: KeptKey, Answer: KeptAnswer> {
    private struct Entry {
        var body: Answer
        /// The answer's and its key's bytes: a key holds what the client sent.
        var cost: Int
        var madeAt: Int64
        /// How long it is served (`SharedAnswerTable.lifetime(named:maxAge:)`).
        var lifetime: Int64
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
    private let shared: SharedTier?

    /// The host's table, as this cache's answers go in it under their keys' names.
    struct SharedTier {
        let name: (Key) -> [UInt8]
        let find: (_ name: [UInt8], _ generation: Int64, _ madeSince: Int64, _ askedAt: Int64) -> (body: Answer, madeAt: Int64)?
        let keep: (_ name: [UInt8], Answer, _ generation: Int64, _ madeAt: Int64, _ asked: Bool) -> Void
    }

    init(counters: any SharedCounters, maxAgeMillis: Int64, maxBytes: Int = 4 << 20, clock: any TimeSource = MonotonicClock(),
         shared: SharedTier? = nil) {
        self.counters = counters
        self.maxAgeMillis = maxAgeMillis
        self.clock = clock
        self.maxBytes = maxBytes
        self.shared = shared
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
        let time = clock.now.millis
        if now != generation {
            forget()
            generation = now
        } else if let entry = entries[key], time - entry.madeAt < entry.lifetime {
            return entry.body
        }
        // The key's name (for a page, its answer's digest) only when this worker has no answer.
        let name = shared?.name(key)
        let lifetime = name.map { SharedAnswerTable.lifetime(named: $0, maxAge: maxAgeMillis) } ?? maxAgeMillis
        if let shared, let name, let found = shared.find(name, now, time - lifetime + 1, time) {
            keep(found.body, for: key, madeAt: found.madeAt, lifetime: lifetime)
            return found.body
        }
        let answer = try make()
        if answer.keep, key.keptBytes + answer.body.keptBytes <= maxBytes / 8 {
            keep(answer.body, for: key, madeAt: time, lifetime: lifetime)
            if let shared, let name { shared.keep(name, answer.body, now, time, true) }
        }
        return answer.body
    }

    /// Makes `key`'s answer again and keeps it in the host's table only,
    /// for the requests to come (`AnswerRefresher`): under the generation
    /// read before it was made, as `answer(for:)` keeps one.
    func remake(_ key: Key, _ make: () throws -> Answer) rethrows {
        guard maxAgeMillis > 0, let shared, let generation = try? counters.streamGeneration else { return }
        let time = clock.now.millis
        let body = try make()
        if body.keptBytes <= maxBytes / 8 { shared.keep(shared.name(key), body, generation, time, false) }
    }

    private func keep(_ body: Answer, for key: Key, madeAt: Int64, lifetime: Int64) {
        let cost = key.keptBytes + body.keptBytes
        if bytes + cost > maxBytes {
            let middle = entries.values.map(\.order).sorted()[entries.count / 2]
            entries = entries.filter { $0.value.order >= middle }
            bytes = entries.values.reduce(0) { $0 + $1.cost }
        }
        made += 1
        bytes += cost - (entries[key]?.cost ?? 0)
        entries[key] = Entry(body: body, cost: cost, madeAt: madeAt, lifetime: lifetime, order: made)
    }

    private func forget() {
        entries.removeAll(keepingCapacity: true)
        bytes = 0
        generation = -1
    }
}

extension AnswerCache where Answer: SharedAnswer {
    /// A cache whose answers the host's other workers find in `table` too
    /// (nil: this worker's only), under the names `sharedKey` gives.
    convenience init(counters: any SharedCounters, maxAgeMillis: Int64, clock: any TimeSource,
                     table: SharedAnswerTable?, sharedKey: @escaping (Key) -> [UInt8]) {
        let tier = table.map { table in
            SharedTier(name: sharedKey,
                       find: { name, generation, madeSince, askedAt in
                           table.find(name, generation: generation, madeSince: madeSince, askedAt: askedAt).flatMap { found in
                               Answer(sharedBytes: found.body).map { ($0, found.madeAt) }
                           }
                       },
                       keep: { table.keep($1.sharedBytes, for: $0, generation: $2, madeAt: $3, asked: $4) })
        }
        self.init(counters: counters, maxAgeMillis: maxAgeMillis, clock: clock, shared: tier)
    }
}

/// An answer as a `SharedAnswerTable` keeps it: bytes, read back alike.
protocol SharedAnswer: KeptAnswer {
    var sharedBytes: [UInt8] { get }
    init?(sharedBytes: [UInt8])
}

extension Array: SharedAnswer where Element == UInt8 {
    var sharedBytes: [UInt8] { self }
    init?(sharedBytes: [UInt8]) { self = sharedBytes }
}

/// What an `AnswerCache` keeps: its bytes count against the cache's bound.
protocol KeptAnswer {
    var keptBytes: Int { get }
}

/// An `AnswerCache`'s question: its bytes count too, as they hold what a
/// client sent (a megabyte of a parameter made a key counted as nothing).
protocol KeptKey: Hashable {
    var keptBytes: Int { get }
}

extension Array: KeptAnswer where Element == UInt8 {
    var keptBytes: Int { count }
}
