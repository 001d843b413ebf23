/// `search` over the in-memory photos, for the App's unit tests: every
/// photo's words made on the fly with the index's own rules.
public final class InMemoryPhotoSearch: PhotoSearch {
    private let photos: InMemoryPhotoStore

    public init(photos: InMemoryPhotoStore) { self.photos = photos }

    public func newestMatches(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int) throws -> [PhotoRecord] {
        Array(try matches(terms: terms, scope: scope).filter { $0.id < (before ?? Int64.max) }.prefix(limit))
    }

    /// In IdPhoto order, spans too (the in-memory upload times grow with it).
    public func photos(in scope: PhotoScope, oldestFirst: Bool, offset: Int, limit: Int) throws -> [PhotoRecord] {
        let newest = try matches(terms: [], scope: scope)
        return Array((oldestFirst ? Array(newest.reversed()) : newest).dropFirst(offset).prefix(limit))
    }

    public func countMatches(terms: [[UInt8]], scope: PhotoScope, cap: Int) throws -> Int {
        min(cap, try matches(terms: terms, scope: scope).count)
    }

    private func matches(terms: [[UInt8]], scope: PhotoScope) throws -> [PhotoRecord] {
        let all = try photos.newest(limit: Int.max)
        let details = try photos.details(ids: Set(all.map(\.id)))
        return all.filter { photo in
            let words = Self.words(of: photo)
            return (scope.userID.map { $0 == photo.userID } ?? true) && scope.admits(uploadedAt: details[photo.id]?.created)
                && terms.allSatisfy { term in words.contains { $0.starts(with: term) } }
        }
    }

    public func wholeWordCounts(photoIDs: [Int64], terms: [[UInt8]]) throws -> [Int64: Int] {
        var counts: [Int64: Int] = [:]
        for id in photoIDs {
            guard let photo = try photos.photo(id: id) else { continue }
            let words = Self.words(of: photo)
            counts[id] = terms.filter(words.contains).count
        }
        return counts
    }

    private static func words(of photo: PhotoRecord) -> [[UInt8]] {
        SearchWords.indexWords(photo.title ?? []) + SearchWords.indexWords(photo.username ?? [])
    }
}
