#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The rendered answer of the full `stream` (the newest 50 photos), kept
/// by each worker so that the hot feed costs no database round trip while
/// nothing changed.
///
/// - Read-your-writes: every upload bumps a generation counter in memory
///   shared by all workers, and a worker only serves its copy for the
///   current generation, so the next stream on any worker shows the photo.
/// - Changes behind our back (another server or the PHP version on the same
///   database) show after at most `maxAge`.
public final class StreamCache {
    /// The shared generation counter (an anonymous shared mapping made
    /// before the workers are forked).
    public final class Generation: @unchecked Sendable {
        fileprivate let word: UnsafeMutablePointer<CLongLong>

        public init() {
            word = sharedMemory(bytes: 64, for: "stream generation").bindMemory(to: CLongLong.self, capacity: 1)
        }

        var current: Int64 { Int64(csystem_load(word)) }
        func bump() { _ = csystem_add(word, 1) }
    }

    private let generation: Generation
    private let maxAgeMillis: Int64
    private var body: [UInt8] = []
    private var bodyGeneration: Int64 = -1
    private var renderedAt: Int64 = 0

    /// `maxAgeMillis` 0 turns the cache off.
    public init(generation: Generation = Generation(), maxAgeMillis: Int64) {
        self.generation = generation
        self.maxAgeMillis = maxAgeMillis
    }

    /// The cached answer if it is current, else `render()`'s, kept.
    func answer(_ render: () throws -> [UInt8]) rethrows -> [UInt8] {
        let now = monotonicMillis()
        let current = generation.current
        if maxAgeMillis > 0, bodyGeneration == current, now - renderedAt < maxAgeMillis { return body }
        let fresh = try render()
        (body, bodyGeneration, renderedAt) = (fresh, current, now)
        return fresh
    }

    /// The photos changed: every worker renders again.
    func invalidate() { generation.bump() }
}
