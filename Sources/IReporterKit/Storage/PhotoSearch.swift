/// What `search` asks for: every term must start a word of the photo's
/// title or its author's username (`SearchWords`); no terms: every photo
/// (Flickr's getRecent and a user's photos).
public struct PhotoSearchQuery: Sendable, Hashable {
    public enum Order: String, Sendable {
        /// Newest first; pages continue `before` the last photo shown.
        case newest
        /// Photos where more terms are whole words first, then newest; over
        /// the newest `PhotoSearchQuery.relevanceWindow` matches.
        case relevance
    }

    /// How many of the newest matches relevance ranks (and pages through).
    public static let relevanceWindow = 500

    public var terms: [[UInt8]]
    /// Only this author's photos.
    public var userID: Int64?
    public var order: Order
    /// Newest order: only photos with a smaller IdPhoto (the cursor).
    public var before: Int64?
    /// Relevance order: matches skipped (page × count).
    public var offset: Int
    public var limit: Int

    public init(terms: [[UInt8]], userID: Int64? = nil, order: Order = .newest, before: Int64? = nil, offset: Int = 0,
                limit: Int) {
        self.terms = terms
        self.userID = userID
        self.order = order
        self.before = before
        self.offset = offset
        self.limit = limit
    }
}

/// Finds photos by words. An implementation answers the two questions
/// below; the orders are built from them here, the same for every store.
public protocol PhotoSearch: AnyObject {
    /// The newest photos (below `before`, by `userID` if given) matching
    /// every term, at most `limit`.
    func newestMatches(terms: [[UInt8]], userID: Int64?, before: Int64?, limit: Int) throws -> [PhotoRecord]
    /// How many photos match, counted up to `cap`.
    func countMatches(terms: [[UInt8]], userID: Int64?, cap: Int) throws -> Int
    /// For each of `photoIDs`, how many of `terms` are whole words of it.
    func wholeWordCounts(photoIDs: [Int64], terms: [[UInt8]]) throws -> [Int64: Int]
}

extension PhotoSearch {
    public func search(_ query: PhotoSearchQuery) throws -> [PhotoRecord] {
        guard query.limit > 0 else { return [] }
        switch query.order {
        case .newest:
            let page = try newestMatches(terms: query.terms, userID: query.userID, before: query.before,
                                         limit: query.offset + query.limit)
            return Array(page.dropFirst(query.offset))
        case .relevance:
            guard query.offset < PhotoSearchQuery.relevanceWindow else { return [] }
            let window = try newestMatches(terms: query.terms, userID: query.userID, before: nil,
                                           limit: PhotoSearchQuery.relevanceWindow)
            let counts = try wholeWordCounts(photoIDs: window.map(\.id), terms: query.terms)
            // Stable: among equal counts the newest stays first.
            let ranked = window.enumerated().sorted {
                let (left, right) = (counts[$0.element.id] ?? 0, counts[$1.element.id] ?? 0)
                return left != right ? left > right : $0.offset < $1.offset
            }.map(\.element)
            return Array(ranked.dropFirst(query.offset).prefix(query.limit))
        }
    }
}

/// A search a store refuses to answer.
public enum PhotoSearchError: Error, Equatable {
    /// Only terms that each start very many words (one or two letters):
    /// answering would read a large part of the index.
    case tooBroad
}
