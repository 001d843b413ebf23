import Testing
@testable import IReporterKit

/// The workers' cache of recent search answers: asked again while nothing
/// changed, the store is not asked; any change through the installation
/// (the shared stream generation) or the age limit makes it ask again.
struct CachedPhotoSearchTests {
    /// Counts the questions that reach the store.
    private final class CountingSearch: PhotoSearch {
        let inner: any PhotoSearch
        var asked = 0
        init(_ inner: any PhotoSearch) { self.inner = inner }

        func newestMatches(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int) throws -> [PhotoRecord] {
            asked += 1
            return try inner.newestMatches(terms: terms, scope: scope, before: before, limit: limit)
        }

        func photos(in scope: PhotoScope, oldestFirst: Bool, offset: Int, limit: Int) throws -> [PhotoRecord] {
            asked += 1
            return try inner.photos(in: scope, oldestFirst: oldestFirst, offset: offset, limit: limit)
        }

        func countMatches(terms: [[UInt8]], scope: PhotoScope, cap: Int) throws -> Int {
            asked += 1
            return try inner.countMatches(terms: terms, scope: scope, cap: cap)
        }

        func wholeWordCounts(photoIDs: [Int64], terms: [[UInt8]]) throws -> [Int64: Int] {
            asked += 1
            return try inner.wholeWordCounts(photoIDs: photoIDs, terms: terms)
        }
    }

    private let users = InMemoryUserStore()
    private let photos: InMemoryPhotoStore
    private let counters = InMemoryCounters()
    private let store: CountingSearch

    init() throws {
        photos = InMemoryPhotoStore(users: users)
        store = CountingSearch(InMemoryPhotoSearch(photos: photos))
        _ = try users.register(username: Array("alice".utf8), password: Array("p".utf8))
        for title in ["sunset one", "sunset two", "beach"] {
            _ = try photos.add(userID: 1, title: Array(title.utf8), publish: { _ in }, unpublish: { _ in })
        }
    }

    private func sunset(_ search: any PhotoSearch, before: Int64? = nil) throws -> [Int64] {
        try search.search(PhotoSearchQuery(terms: [Array("sunset".utf8)], before: before, limit: 10)).map(\.id)
    }

    @Test func theSameQuestionIsAnsweredOnceUntilSomethingChanges() throws {
        let cached = CachedPhotoSearch(store, counters: counters, maxAgeMillis: 60_000)
        #expect(try sunset(cached) == [3, 2])
        #expect(try sunset(cached) == [3, 2])
        #expect(store.asked == 1)
        #expect(try sunset(cached, before: 3) == [2], "another page is another question")
        #expect(try cached.countMatches(terms: [Array("sunset".utf8)], scope: .everything, cap: 10) == 2)
        #expect(try cached.countMatches(terms: [Array("sunset".utf8)], scope: .everything, cap: 10) == 2)
        #expect(store.asked == 3)
        #expect(try cached.photos(in: PhotoScope(userID: 1), oldestFirst: true, offset: 0, limit: 2).map(\.id) == [2, 3])
        #expect(try cached.photos(in: PhotoScope(userID: 1), oldestFirst: true, offset: 0, limit: 2).map(\.id) == [2, 3])
        #expect(store.asked == 4)
        #expect(try cached.photos(in: PhotoScope(userID: 1), oldestFirst: false, offset: 0, limit: 2).map(\.id) == [4, 3],
                "another order is another question")
        #expect(try cached.photos(in: PhotoScope(userID: 1), oldestFirst: true, offset: 1, limit: 2).map(\.id) == [3, 4],
                "another offset is another question")
        #expect(store.asked == 6)

        _ = try photos.add(userID: 1, title: Array("sunset three".utf8), publish: { _ in }, unpublish: { _ in })
        counters.bumpStreamGeneration() // what an upload through any worker does
        #expect(try sunset(cached) == [5, 3, 2], "read-your-writes")
        #expect(store.asked == 7)
    }

    @Test func aChangeBehindTheInstallationsBackShowsOnceTheAnswerIsOld() throws {
        let clock = ManualClock()
        let cached = CachedPhotoSearch(store, counters: counters, maxAgeMillis: 1000, clock: clock)
        #expect(try sunset(cached) == [3, 2])
        _ = try photos.add(userID: 1, title: Array("sunset elsewhere".utf8), publish: { _ in }, unpublish: { _ in }) // no bump
        clock.advance(byMillis: 999)
        #expect(try sunset(cached) == [3, 2])
        clock.advance(byMillis: 1)
        #expect(try sunset(cached) == [5, 3, 2])
        #expect(store.asked == 2)
    }

    @Test func offWithAnAgeOfZero() throws {
        let cached = CachedPhotoSearch(store, counters: counters, maxAgeMillis: 0)
        #expect(try sunset(cached) == [3, 2])
        #expect(try sunset(cached) == [3, 2])
        #expect(store.asked == 2)
    }

    @Test func boundedInSize() throws {
        let cached = CachedPhotoSearch(store, counters: counters, maxAgeMillis: 60_000, capacity: 4)
        for before in 1...10 { _ = try sunset(cached, before: Int64(before)) }
        #expect(store.asked == 10)
        #expect(try sunset(cached, before: 10) == [3, 2], "the newest answers stay")
        #expect(store.asked == 10)
        #expect(try sunset(cached, before: 1) == [])
        #expect(store.asked == 11, "the oldest went")
    }
}
