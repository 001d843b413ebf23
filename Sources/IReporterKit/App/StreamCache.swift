/// The rendered answer of the full `stream` (the newest 50 photos), kept
/// by each worker so that the hot feed costs no database round trip while
/// nothing changed.
///
/// - Read-your-writes: every upload and deletion bumps the stream generation of the
///   shared counters, and a worker only serves its copy for the current
///   generation, so the next stream on any worker shows the photo.
/// - Changes behind our back (another server or the PHP version on the same
///   database) show after at most `maxAge`.
///
/// The same copy answers the polling of `stream` with `since` (only what is
/// new): while it is current and holds every photo newer than `since`, the
/// answer is cut from it, so a poll that finds nothing new costs no query.
public final class StreamCache {
    private let counters: any SharedCounters
    private let maxAgeMillis: Int64
    private var photos: [PhotoRecord] = []
    private var body: [UInt8] = []
    private var bodyGeneration: Int64 = -1
    private var renderedAt: Int64 = 0

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

    private func refreshed(_ load: () throws -> [PhotoRecord]) rethrows -> (photos: [PhotoRecord], body: [UInt8]) {
        let now = monotonicMillis()
        let current = counters.streamGeneration
        if maxAgeMillis > 0, bodyGeneration == current, now - renderedAt < maxAgeMillis { return (photos, body) }
        let fresh = try load()
        (photos, body, bodyGeneration, renderedAt) = (fresh, PhotoList(photos: fresh).json, current, now)
        return (photos, body)
    }
}
