/// The rendered answer of the full `stream` (the newest 50 photos), kept
/// by each worker so that the hot feed costs no database round trip while
/// nothing changed.
///
/// - Read-your-writes: every upload, deletion, vote and comment bumps the stream generation of the
///   shared counters, and a worker only serves its copy for the current
///   generation, so the next stream on any worker shows the photo.
/// - Changes behind our back (another server or the PHP version on the same
///   database) show after at most `maxAge`.
///
/// The same copy answers the polling of `stream` with `since` (only what is
/// new): while it is current and holds every photo newer than `since`, the
/// answer is cut from it, so a poll that finds nothing new costs no query.
///
/// And the newest photos with their counts and details, for the stream with
/// `extras`, and the answers rendered from them for each viewer (with their
/// votes) and set of fields: every vote and comment through any worker bumps
/// the generation too, so counts and a viewer's own votes read back current,
/// and a phone polling an unchanged stream costs no query and no rendering.
public final class StreamCache {
    /// A cached value, the generation it was loaded under and when.
    private struct Slot<Value> {
        var value: Value
        var generation: Int64 = -1
        var loadedAt: Int64 = 0
    }

    private let counters: any SharedCounters
    private let maxAgeMillis: Int64
    private let clock: any TimeSource
    /// Where the host's nginx finds the full stream's answer (`stream_answer_file`).
    private let answerFile: StreamAnswerFile?
    private var stream = Slot<(photos: [PhotoRecord], body: [UInt8])>(value: ([], []))
    private var withExtras = Slot<NewestWithExtras>(value: NewestWithExtras(photos: []))
    /// Answers kept per generation (about 8 KiB each for 50 photos); beyond
    /// it they are forgotten all at once.
    static let maxAnswers = 512

    /// The newest photos with their counts and details, and the answers
    /// rendered from them so far under the same generation.
    private struct NewestWithExtras {
        var photos: [(photo: PhotoRecord, extras: PhotoExtras)]
        var answers: [AnswerKey: [UInt8]] = [:]
    }

    /// Whose votes (nil: no one's) and which fields an answer shows.
    private struct AnswerKey: Hashable {
        var viewer: Int64?
        var fields: [StreamExtra]
    }

    /// Photos read ahead for the single-photo calls of a JSON-RPC batch,
    /// and the generation they were read under.
    private var readAhead: (ids: Set<Int64>, photos: [Int64: PhotoRecord], generation: Int64)?

    /// `maxAgeMillis` 0 turns the cache off; ages are read on `clock`. Each
    /// full stream loaded is also put in `answerFile`, if any.
    public init(counters: any SharedCounters, maxAgeMillis: Int64, clock: any TimeSource = MonotonicClock(),
                answerFile: StreamAnswerFile? = nil) {
        self.counters = counters
        self.maxAgeMillis = maxAgeMillis
        self.clock = clock
        self.answerFile = maxAgeMillis > 0 ? answerFile : nil
    }

    /// The rendered stream if it is current, else that of `load()`'s photos, kept.
    func answer(_ load: () throws -> [PhotoRecord]) rethrows -> [UInt8] {
        try refreshed(load).body
    }

    /// The page asked of the photos newer than its `since` (the newest of
    /// them, or with `fromSince` the ones just after it), cut from the
    /// current stream of `length` photos; nil when photos that old may be
    /// missing from it (the caller asks the store).
    func photos(newerThan page: PageCursor, length: Int, _ load: () throws -> [PhotoRecord]) rethrows -> [PhotoRecord]? {
        let newest = try refreshed(load).photos
        guard newest.count < length || page.since >= newest[newest.count - 1].id else { return nil }
        return page.pick(newest.prefix { $0.id > page.since })
    }

    /// The answer of the newest photos with `fields` and `viewer`'s votes
    /// (nil: no one's), if current; else `render`'s of the newest photos
    /// with their counts and details (`load()`'s, kept) and the viewer's
    /// votes on them (`votes`'s), kept. The generation is read before
    /// either is loaded, so what is kept is never older than the
    /// generation it is kept under.
    func answerWithExtras(viewer: Int64?, fields: [StreamExtra],
                          _ load: () throws -> [(photo: PhotoRecord, extras: PhotoExtras)],
                          votes: (_ viewer: Int64, _ photoIDs: [Int64]) throws -> [Int64: Vote],
                          render: ([(photo: PhotoRecord, extras: PhotoExtras)]) -> [UInt8]) rethrows -> [UInt8] {
        let key = AnswerKey(viewer: viewer, fields: fields)
        let generation = try? counters.streamGeneration
        var photos = try current(&withExtras, generation: generation) { NewestWithExtras(photos: try load()) }.photos
        // The kept photos are this generation's now: their answers too (none while the counters are out of reach).
        let keeps = maxAgeMillis > 0 && generation != nil
        if keeps, let answer = withExtras.value.answers[key] { return answer }
        if let viewer {
            let mine = try votes(viewer, photos.map(\.photo.id))
            for index in photos.indices { photos[index].extras.myVote = mine[photos[index].photo.id] }
        }
        let answer = render(photos)
        if keeps {
            if withExtras.value.answers.count >= Self.maxAnswers { withExtras.value.answers = [:] }
            withExtras.value.answers[key] = answer
        }
        return answer
    }

    /// Reads these photos with one query for the calls of a batch. A
    /// failure is forgotten: each call then reads its own and meets its own error.
    func readAhead(_ ids: Set<Int64>, _ load: (Set<Int64>) throws -> [Int64: PhotoRecord]) {
        guard let generation = try? counters.streamGeneration else { readAhead = nil; return }
        readAhead = (try? load(ids)).map { (ids, $0, generation) }
    }

    /// The photo `id` as read ahead, while no upload, deletion, vote or
    /// comment happened since; else `load()`'s.
    func photo(id: Int64, _ load: () throws -> PhotoRecord?) rethrows -> PhotoRecord? {
        if let readAhead, readAhead.ids.contains(id), readAhead.generation == (try? counters.streamGeneration) {
            return readAhead.photos[id]
        }
        return try load()
    }

    /// The batch is answered: what was read ahead for it is dropped.
    func endBatch() { readAhead = nil }

    /// Makes the answer file's answer again from `load()`'s photos (the
    /// answer refresher, ahead of its end), whatever this cache keeps.
    func remakeAnswerFile(_ load: () throws -> [PhotoRecord]) throws {
        guard answerFile != nil, let generation = try? counters.streamGeneration else { return }
        _ = rendered(try load(), generation: generation)
    }

    private func refreshed(_ load: () throws -> [PhotoRecord]) rethrows -> (photos: [PhotoRecord], body: [UInt8]) {
        let generation = try? counters.streamGeneration
        return try current(&stream, generation: generation) {
            let photos = try load()
            return (photos, rendered(photos, generation: generation))
        }
    }

    /// The full stream's answer, also kept in the answer file if the stream
    /// is still at `generation` (the one read before `photos` were).
    private func rendered(_ photos: [PhotoRecord], generation: Int64?) -> [UInt8] {
        let body = PhotoList(photos: photos).json
        if let answerFile, let generation {
            answerFile.keep(body, madeUnder: generation) { try? counters.streamGeneration }
        }
        return body
    }

    /// The slot's value if kept under `generation` and young enough, else
    /// `load()`'s, kept under it; nil `generation` (counters out of reach:
    /// Redis down) is served uncached.
    private func current<Value>(_ slot: inout Slot<Value>, generation: Int64?,
                                _ load: () throws -> Value) rethrows -> Value {
        let now = clock.now.millis
        guard let generation else { return try load() }
        if maxAgeMillis > 0, slot.generation == generation, now - slot.loadedAt < maxAgeMillis { return slot.value }
        slot = Slot(value: try load(), generation: generation, loadedAt: now)
        return slot.value
    }
}
