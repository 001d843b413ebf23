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
/// `extras`: every vote and comment through any worker bumps the generation
/// too, so counts read back current; the viewer's own votes are never cached.
public final class StreamCache {
    /// A cached value, the generation it was loaded under and when.
    private struct Slot<Value> {
        var value: Value
        var generation: Int64 = -1
        var loadedAt: Int64 = 0
    }

    private let counters: any SharedCounters
    private let maxAgeMillis: Int64
    private var stream = Slot<(photos: [PhotoRecord], body: [UInt8])>(value: ([], []))
    private var withExtras = Slot<[(photo: PhotoRecord, extras: PhotoExtras)]>(value: [])

    /// `maxAgeMillis` 0 turns the cache off.
    public init(counters: any SharedCounters, maxAgeMillis: Int64) {
        self.counters = counters
        self.maxAgeMillis = maxAgeMillis
    }

    /// The rendered stream if it is current, else that of `load()`'s photos, kept.
    func answer(_ load: () throws -> [PhotoRecord]) rethrows -> [UInt8] {
        try refreshed(load).body
    }

    /// The photos newer than `since`, newest first, at most `count`, cut
    /// from the current stream of `length` photos; nil when photos that
    /// old may be missing from it (the caller asks the store).
    func photos(newerThan since: Int64, count: Int, length: Int, _ load: () throws -> [PhotoRecord]) rethrows -> [PhotoRecord]? {
        let newest = try refreshed(load).photos
        guard newest.count < length || since >= newest[newest.count - 1].id else { return nil }
        return Array(newest.prefix { $0.id > since }.prefix(count))
    }

    /// The newest photos with their counts and details (no viewer's vote),
    /// if current, else `load()`'s, kept.
    func photosWithExtras(_ load: () throws -> [(photo: PhotoRecord, extras: PhotoExtras)]) rethrows
        -> [(photo: PhotoRecord, extras: PhotoExtras)] {
        try current(&withExtras, load)
    }

    private func refreshed(_ load: () throws -> [PhotoRecord]) rethrows -> (photos: [PhotoRecord], body: [UInt8]) {
        try current(&stream) {
            let photos = try load()
            return (photos, PhotoList(photos: photos).json)
        }
    }

    private func current<Value>(_ slot: inout Slot<Value>, _ load: () throws -> Value) rethrows -> Value {
        let now = monotonicMillis()
        // Counters out of reach (Redis down): the stream is still served, uncached.
        guard let generation = try? counters.streamGeneration else { return try load() }
        if maxAgeMillis > 0, slot.generation == generation, now - slot.loadedAt < maxAgeMillis { return slot.value }
        slot = Slot(value: try load(), generation: generation, loadedAt: now)
        return slot.value
    }
}
