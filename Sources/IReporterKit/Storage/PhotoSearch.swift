/// What `search` asks for: every term must start a word of the photo's
/// title or its author's username (`SearchWords`); no terms: every photo
/// (Flickr's getRecent and a user's photos).
/// Which photos a search looks among: one author's, uploaded within a span.
/// Without words, a span's photos come newest upload first (Flickr's
/// `date-posted-desc`), read from the upload-time index, or oldest first
/// (`photos(in:oldestFirst:…)`); otherwise newest IdPhoto first, as every
/// other list.
public struct PhotoScope: Sendable, Hashable {
    public var userID: Int64?
    /// Unix seconds, both ends included (Flickr's `min_upload_date` and
    /// `max_upload_date`). A photo whose upload time was not kept (stored
    /// before migration 003, or by the PHP version) is outside any span.
    public var uploadedFrom: Int64?
    public var uploadedTo: Int64?

    public init(userID: Int64? = nil, uploadedFrom: Int64? = nil, uploadedTo: Int64? = nil) {
        (self.userID, self.uploadedFrom, self.uploadedTo) = (userID, uploadedFrom, uploadedTo)
    }

    public static let everything = PhotoScope()

    public var hasUploadSpan: Bool { uploadedFrom != nil || uploadedTo != nil }

    /// Whether a photo uploaded at `created` (nil: not kept) is in the span.
    public func admits(uploadedAt created: Int64?) -> Bool {
        guard hasUploadSpan else { return true }
        guard let created else { return false }
        return created >= (uploadedFrom ?? .min) && created <= (uploadedTo ?? .max)
    }
}

public struct PhotoSearchQuery: Sendable, Hashable {
    public enum Order: String, Sendable, CaseIterable {
        /// Newest first; pages continue `before` the last photo shown.
        case newest
        /// Photos where more terms are whole words first, then newest; over
        /// the newest `PhotoSearchQuery.relevanceWindow` matches.
        case relevance
    }

    /// How many of the newest matches relevance ranks (and pages through).
    public static let relevanceWindow = 500

    public var terms: [[UInt8]]
    /// Only these photos (an author's, a span of upload times).
    public var scope: PhotoScope
    public var order: Order
    /// Newest order: only photos with a smaller IdPhoto (the cursor).
    public var before: Int64?
    /// Relevance order: matches skipped (page × count).
    public var offset: Int
    public var limit: Int

    public init(terms: [[UInt8]], scope: PhotoScope = .everything, order: Order = .newest, before: Int64? = nil,
                offset: Int = 0, limit: Int) {
        self.terms = terms
        self.scope = scope
        self.order = order
        self.before = before
        self.offset = offset
        self.limit = limit
    }
}

/// Finds photos by words. An implementation answers the two questions
/// below; the orders are built from them here, the same for every store.
public protocol PhotoSearch: AnyObject {
    /// The newest photos of `scope` (below `before`) matching every term,
    /// at most `limit`.
    func newestMatches(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int) throws -> [PhotoRecord]
    /// The photos of `scope`, whatever their words, newest or oldest first
    /// (within a span of upload times by upload time, else by IdPhoto), the
    /// first `offset` skipped, at most `limit`.
    func photos(in scope: PhotoScope, oldestFirst: Bool, offset: Int, limit: Int) throws -> [PhotoRecord]
    /// How many photos of `scope` match, counted up to `cap`.
    func countMatches(terms: [[UInt8]], scope: PhotoScope, cap: Int) throws -> Int
    /// For each of `photoIDs`, how many of `terms` are whole words of it.
    func wholeWordCounts(photoIDs: [Int64], terms: [[UInt8]]) throws -> [Int64: Int]
}

extension PhotoSearch {
    public func search(_ query: PhotoSearchQuery) throws -> [PhotoRecord] {
        guard query.limit > 0 else { return [] }
        switch query.order {
        case .newest:
            let page = try newestMatches(terms: query.terms, scope: query.scope, before: query.before,
                                         limit: query.offset + query.limit)
            return Array(page.dropFirst(query.offset))
        case .relevance:
            guard query.offset < PhotoSearchQuery.relevanceWindow else { return [] }
            let window = try newestMatches(terms: query.terms, scope: query.scope, before: nil,
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

    /// The matches of words oldest first (Flickr's `date-posted-asc`),
    /// `offset` skipped (without words the store reads them so:
    /// `photos(in:…)`). The words' indexes are read newest first, so every
    /// match is read and put in IdPhoto order, whichever plan found them
    /// (one in upload-time order is chosen by MariaDB's estimates, which may
    /// change between two pages): refused when more than `window` match.
    public func oldestFirst(terms: [[UInt8]], scope: PhotoScope, offset: Int, limit: Int, window: Int) throws -> [PhotoRecord] {
        guard limit > 0 else { return [] }
        let every = try newestMatches(terms: terms, scope: scope, before: nil, limit: window + 1)
        guard every.count <= window else { throw PhotoSearchError.tooManyForOldestFirst }
        return Array(every.sorted { $0.id < $1.id }.dropFirst(offset).prefix(limit))
    }
}

/// A search a store refuses to answer.
public enum PhotoSearchError: Error, Equatable {
    /// The page was not full when the search had read as many index rows
    /// as a question may (words that seldom meet, terms of one or two
    /// letters, a span or an author with few matches among many photos):
    /// answering would read a large part of the index.
    case tooBroad
    /// A span of upload times without words, on a database without the
    /// upload-time index (sql/migrations/008): it would read every photo.
    case uploadTimesNotIndexed
    /// Oldest first with words, when more photos match than its window.
    case tooManyForOldestFirst
}
