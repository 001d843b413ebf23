/// The rendered answer of the full `stream` (the newest 50 photos), kept
/// by each worker so that the hot feed costs no database round trip while
/// nothing changed.
///
/// - Read-your-writes: every upload bumps the stream generation of the
///   shared counters, and a worker only serves its copy for the current
///   generation, so the next stream on any worker shows the photo.
/// - Changes behind our back (another server or the PHP version on the same
///   database) show after at most `maxAge`.
public final class StreamCache {
    private let counters: any SharedCounters
    private let maxAgeMillis: Int64
    private var body: [UInt8] = []
    private var bodyGeneration: Int64 = -1
    private var renderedAt: Int64 = 0

    /// `maxAgeMillis` 0 turns the cache off.
    public init(counters: any SharedCounters, maxAgeMillis: Int64) {
        self.counters = counters
        self.maxAgeMillis = maxAgeMillis
    }

    /// The cached answer if it is current, else `render()`'s, kept.
    func answer(_ render: () throws -> [UInt8]) rethrows -> [UInt8] {
        let now = monotonicMillis()
        let current = counters.streamGeneration
        if maxAgeMillis > 0, bodyGeneration == current, now - renderedAt < maxAgeMillis { return body }
        let fresh = try render()
        (body, bodyGeneration, renderedAt) = (fresh, current, now)
        return fresh
    }
}
