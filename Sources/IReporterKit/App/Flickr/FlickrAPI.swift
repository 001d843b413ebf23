/// Flickr's REST API, the methods the Flickr-era clients and libraries
/// call, answered from our photos (docs/API.md lists the differences from
/// Flickr). The gateway hands it a request's parameters; it answers with
/// the content type and body in the format asked for.
public final class FlickrAPI {
    public struct Response: Equatable {
        public let contentType: String
        public let body: [UInt8]
    }

    /// Flickr's `per_page` default and maximum, and the most results a search reaches.
    static let defaultPerPage = 100
    static let maxPerPage = 500
    static let maxResults = 4000
    /// How far an account's list reaches (`people.getPhotos`, a `user_id`
    /// without words, within upload dates or not): backup tools walk it to
    /// its end, as Flickr lets them; its pages and count read the author's
    /// key (an author with more photos than a page within the rows budget
    /// and dates: refused, never cut short).
    static let maxAccountPhotos = 100_000
    /// `comments.getList` answers a photo's newest this many (Flickr has no paging there).
    static let maxComments = 500

    private let search: any PhotoSearch
    private let photos: any PhotoStore
    private let users: any UserStore
    private let comments: any CommentStore
    private let photoFiles: any PhotoFileStore
    /// Empty: any key (or none) is accepted.
    private let apiKeys: Set<String>
    private let answers: AnswerCache<ListQuestion, [UInt8]>
    /// The last request's error, if it failed (the access log's outcome).
    public private(set) var lastFailure: FlickrError?

    /// What a list's answer depends on: the parameters the list methods
    /// and the formats read (`answerParameters`), and where the photos are
    /// served. Only those: a request's other parameters, of any size, made
    /// keys the cache's byte limit did not count (a megabyte each).
    private struct ListQuestion: KeptKey {
        var parameters: [String: [UInt8]]
        var siteURL: String

        var keptBytes: Int { parameters.reduce(siteURL.utf8.count) { $0 + $1.key.utf8.count + $1.value.count + 32 } }

        init(_ parameters: [String: [UInt8]], siteURL: String) {
            self.parameters = parameters.filter { FlickrAPI.answerParameters.contains($0.key) }
            self.siteURL = siteURL
        }
    }

    /// Every parameter a list's answer is made from (`FlickrCall`, `FlickrFormat`).
    static let answerParameters: Set<String> = ["method", "text", "tags", "tag_mode", "user_id", "min_upload_date", "max_upload_date", "sort",
                                                "page", "per_page", "extras", "format", "nojsoncallback", "jsoncallback"]

    public init(services: AppServices, apiKeys: Set<String> = []) {
        search = services.search
        photos = services.photos
        users = services.users
        comments = services.comments
        photoFiles = services.photoFiles
        self.apiKeys = apiKeys
        answers = AnswerCache(counters: services.counters, maxAgeMillis: Int64(services.policy.searchCacheMillis), clock: services.clock)
    }

    /// `parameters`: the query string's and the body's; `oauthConsumerKey`:
    /// the key of an OAuth-signed request (how `flickrapi` sends its key);
    /// `siteURL`: the installation's root as the client reaches it (`…/iReporter/`).
    private func noting<T>(_ result: Result<T, FlickrError>) -> Result<T, FlickrError> {
        if case .failure(let error) = result { lastFailure = error }
        return result
    }

    public func handle(_ parameters: [String: [UInt8]], oauthConsumerKey: String?, siteURL: String) -> Response {
        lastFailure = nil
        let format: FlickrFormat
        switch FlickrFormat.requested(parameters) {
        case .success(let requested): format = requested
        case .failure(let error):
            lastFailure = error
            // A refused callback is answered as plain JSON: nothing of it is echoed.
            let fallback: FlickrFormat = parameters["format"] == Array("json".utf8) ? .json : .rest
            return Response(contentType: fallback.contentType, body: fallback.body(.failure(error)))
        }
        if !apiKeys.isEmpty {
            let key = parameters["api_key"].map { String(decoding: $0, as: UTF8.self) } ?? oauthConsumerKey
            guard let key, apiKeys.contains(key) else {
                lastFailure = .invalidAPIKey
                return Response(contentType: format.contentType, body: format.body(.failure(.invalidAPIKey)))
            }
        }
        let method = String(decoding: parameters["method"] ?? [], as: UTF8.self)
        guard FlickrMethod(rawValue: method)?.keepsAnswers == true else {
            return Response(contentType: format.contentType, body: format.body(noting(answer(parameters, siteURL: siteURL))))
        }
        let question = ListQuestion(parameters, siteURL: siteURL)
        return Response(contentType: format.contentType, body: answers.answer(for: question) {
            let result = noting(answer(parameters, siteURL: siteURL))
            if case .failure = result { return (format.body(result), keep: false) }
            return (format.body(result), keep: true)
        })
    }

    private func answer(_ parameters: [String: [UInt8]], siteURL: String) -> Result<[FlickrElement], FlickrError> {
        let name = String(decoding: parameters["method"] ?? [], as: UTF8.self)
        guard let method = FlickrMethod(rawValue: name) else {
            return .failure(.methodNotFound(String(name.prefix(64).filter { $0.isLetter || $0.isNumber || $0 == "." })))
        }
        let call = FlickrCall(parameters: parameters, siteURL: siteURL)
        do {
            switch method {
            case .testEcho: return .success(echo(parameters))
            case .reflectionGetMethodInfo:
                guard let name = parameters["method_name"], let described = FlickrMethod(rawValue: String(decoding: name, as: UTF8.self))
                else { return .failure(.methodInfoNotFound) }
                return .success(described.info)
            case .reflectionGetMethods:
                return .success([FlickrElement("methods", children: FlickrMethod.allCases.map { FlickrElement("method", content: Array($0.rawValue.utf8)) },
                                               list: "method")])
            case .photosSearch:
                let scope = try call.searchScope()
                // A number that is no account's, as one that is no number.
                if let userID = scope.userID, try users.account(id: userID) == nil { return .failure(.userNotFound) }
                return .success([try photoList(call, order: call.order, searches: try call.searches(), scope: scope)])
            case .photosGetRecent: return .success([try photoList(call, searches: [[]], scope: .everything)])
            case .peopleFindByUsername:
                // The name as logging in finds it (any ASCII case, typed decomposed or not).
                guard let name = parameters["username"], !name.isEmpty,
                      let user = try users.accounts(typed: name).first else { return .failure(.personNotFound) }
                return .success([call.user(user)])
            case .peopleGetPublicPhotos:
                // Flickr's own code and words for this method, as people.getInfo's.
                // Whether the account is there (a row), not its counts: `person` reads all its photos.
                guard let userID = call.personID(), try users.account(id: userID) != nil else { return .failure(.personNotFound) }
                return .success([try photoList(call, searches: [[]], scope: PhotoScope(userID: userID))])
            case .peopleGetPhotos:
                // Every photo is public: a person's photos are their public
                // photos, within the upload dates a sync tool asks for
                // (search's); Flickr's code 1 without a user_id, 2 for someone unknown here.
                let scope = try call.searchScope()
                guard let userID = scope.userID else { return .failure(.argumentsMissing) }
                guard try users.account(id: userID) != nil else { return .failure(.userNotFound) }
                return .success([try photoList(call, searches: [[]], scope: scope)])
            case .peopleGetInfo:
                guard let userID = call.personID(), let person = try photos.person(id: userID) else { return .failure(.personNotFound) }
                return .success([call.person(person)])
            case .photosGetInfo: return .success([call.info(try info(try photo(call)))])
            case .photosGetSizes: return .success([call.sizes(measured(try described([try photo(call)]))[0])])
            case .photosCommentsGetList:
                // Flickr's order, oldest first; no `comment` at all when there is none.
                let found = try photo(call)
                let list = try comments.comments(photoID: found.id, page: PageCursor(count: Self.maxComments)).reversed()
                return .success([FlickrElement("comments", [("photo_id", .text(Array(String(found.id).utf8)))],
                                               children: list.map(call.comment), list: list.isEmpty ? nil : "comment")])
            }
        } catch let error as FlickrError {
            return .failure(error)
        } catch PhotoSearchError.tooBroad {
            let words = SearchWords.queryTerms((parameters["text"] ?? []) + [UInt8(ascii: " ")] + (parameters["tags"] ?? []))
            return .failure(words.isEmpty ? .spanTooBroad : .textTooBroad)
        } catch PhotoSearchError.uploadTimesNotIndexed {
            return .failure(.uploadDatesUnavailable)
        } catch PhotoSearchError.tooManyForOldestFirst {
            return .failure(.tooManyForOldestFirst)
        } catch {
            Log.error("flickr \(name): \(error)")
            return .failure(.serviceUnavailable)
        }
    }

    /// Every parameter back, as Flickr does (names that are not XML names are left out).
    /// Every parameter but `stat`, which the answer's own would repeat (a
    /// key twice in one JSON object).
    private func echo(_ parameters: [String: [UInt8]]) -> [FlickrElement] {
        parameters.keys.sorted().filter { $0 != "stat" && FlickrCall.isXMLName($0) }.map { FlickrElement($0, content: parameters[$0]) }
    }

    private func photo(_ call: FlickrCall) throws -> PhotoRecord {
        guard let id = call.photoID(), let found = try photos.photo(id: id) else { throw FlickrError.photoNotFound }
        return found
    }

    /// The photo with its comment count and newest comment's time (`lastupdate`).
    private func info(_ found: PhotoRecord) throws -> FlickrCall.Info {
        let counts = try photos.extras(of: [found.id], viewer: nil)[found.id]
        let newest = try comments.comments(photoID: found.id, page: PageCursor(count: 1)).first
        return FlickrCall.Info(photo: try described([found])[0], comments: counts?.comments ?? 0, lastComment: newest?.created)
    }

    /// `<photos page pages perpage total><photo …/>…</photos>`: the photos
    /// of one search, or of several joined (`FlickrCall.searches`).
    private func photoList(_ call: FlickrCall, order: FlickrCall.ListOrder = .newest, searches: [[[UInt8]]],
                           scope: PhotoScope) throws -> FlickrElement {
        let (page, perPage) = call.paging()
        let offset = (page - 1) * perPage
        let accountList = searches == [[]] && scope.userID != nil
        let reach = accountList ? Self.maxAccountPhotos : Self.maxResults
        let limit = min(perPage, reach - offset)
        let found: [PhotoRecord]
        let total: Int
        if searches.count == 1 {
            let terms = searches[0]
            if offset >= reach {
                found = []
            } else if terms.isEmpty {
                found = try search.photos(in: scope, oldestFirst: order == .oldest, offset: offset, limit: limit)
            } else if order == .oldest {
                found = try search.oldestFirst(terms: terms, scope: scope, offset: offset, limit: limit, window: Self.maxResults)
            } else {
                found = try search.search(PhotoSearchQuery(terms: terms, scope: scope, order: order == .relevance ? .relevance : .newest,
                                                           offset: offset, limit: limit))
            }
            // Relevance ranks the newest matches only (without words, nothing: newest first).
            total = try search.countMatches(terms: terms, scope: scope,
                                            cap: order == .relevance && !terms.isEmpty ? PhotoSearchQuery.relevanceWindow : reach)
        } else {
            // Newest first for `relevance` too.
            let newest: [PhotoRecord]
            (newest, total) = try joined(searches, scope: scope, through: offset + limit, everyMatch: order == .oldest)
            let ordered = order == .oldest ? Array(newest.reversed()) : newest
            found = offset >= reach ? [] : Array(ordered.dropFirst(offset).prefix(limit))
        }
        return FlickrElement("photos", [("page", .number(Int64(page))), ("pages", .number(Int64((total + perPage - 1) / perPage))),
                                        ("perpage", .number(Int64(perPage))), ("total", .number(Int64(total)))],
                             children: try (call.listsDimensions ? measured(described(found)) : described(found)).map(call.listed),
                             list: "photo")
    }

    /// The photos any of `searches` finds, newest first, the newest
    /// `through` at least, each once; and how many there are: exactly
    /// while the searches' counts add up to no more than a list reaches
    /// (then every match is read, once), else the largest count up to the
    /// list's reach (no page promised that could come back empty: a client
    /// walking the pages fails on one). `everyMatch` (oldest first): every
    /// match read, refused when more than a list reaches.
    private func joined(_ searches: [[[UInt8]]], scope: PhotoScope, through: Int,
                        everyMatch: Bool) throws -> ([PhotoRecord], total: Int) {
        // One past the reach: a count that reached it is not taken for exact.
        let counts = try searches.map { try search.countMatches(terms: $0, scope: scope, cap: Self.maxResults + 1) }
        if everyMatch, counts.contains(where: { $0 > Self.maxResults }) { throw PhotoSearchError.tooManyForOldestFirst }
        let exact = everyMatch || counts.reduce(0, +) <= Self.maxResults
        var byID: [Int64: PhotoRecord] = [:]
        for terms in searches {
            for photo in try search.search(PhotoSearchQuery(terms: terms, scope: scope, limit: exact ? Self.maxResults : through)) {
                byID[photo.id] = photo
            }
        }
        let newest = byID.values.sorted { $0.id > $1.id }
        if everyMatch, newest.count > Self.maxResults { throw PhotoSearchError.tooManyForOldestFirst }
        return (newest, exact ? newest.count : min(counts.max() ?? 0, Self.maxResults))
    }

    /// The photos without details (PHP-era ones) given their original's
    /// size, read from each file's header (a list's answer is kept in the
    /// answer cache, so a page is read once, not at every request).
    private func measured(_ photos: [FlickrCall.Photo]) -> [FlickrCall.Photo] {
        photos.map { photo in
            guard photo.details == nil else { return photo }
            var measured = photo
            measured.measured = photoFiles.originalDimensions(id: photo.record.id, secret: photo.secret)
            return measured
        }
    }

    /// The photos with their secrets (given one now if they had none) and
    /// details, two queries for a whole page.
    private func described(_ found: [PhotoRecord]) throws -> [FlickrCall.Photo] {
        let ids = Set(found.map(\.id))
        let secrets = try photos.secrets(ids: ids)
        let details = try photos.details(ids: ids)
        return found.map { FlickrCall.Photo(record: $0, secret: secrets[$0.id], details: details[$0.id]) }
    }
}
