/// A Flickr API failure: `stat="fail"` with Flickr's own code and message,
/// which clients match on.
public struct FlickrError: Error, Equatable {
    public let code: Int
    public let message: String

    static let photoNotFound = FlickrError(code: 1, message: "Photo not found")
    static let userNotFound = FlickrError(code: 2, message: "Unknown user")
    /// `flickr.reflection.getMethodInfo` of a method we do not have.
    static let methodInfoNotFound = FlickrError(code: 1, message: "Method not found")
    /// `flickr.people.getPhotos` without its `user_id`.
    static let argumentsMissing = FlickrError(code: 1, message: "Required arguments missing")
    /// `flickr.people.getInfo`'s and `getPublicPhotos`' own code and words for the same.
    static let personNotFound = FlickrError(code: 1, message: "User not found")
    static let parameterlessSearch = FlickrError(
        code: 3, message: "Parameterless searches have been disabled. Please use flickr.photos.getRecent instead.")
    static let invalidAPIKey = FlickrError(code: 100, message: "Invalid API Key (Key not found)")
    static let serviceUnavailable = FlickrError(code: 105, message: "Service currently unavailable")
    static func formatNotFound(_ format: String) -> FlickrError {
        FlickrError(code: 111, message: "Format \"\(format)\" not found")
    }
    static let badCallback = FlickrError(
        code: 111, message: "jsoncallback must be a JavaScript name (letters, digits, _ and $; dots between names), "
            + "none of them one that runs code (eval, Function, constructor, setTimeout, write, ...)")
    static func methodNotFound(_ method: String) -> FlickrError {
        FlickrError(code: 112, message: "Method \"\(method)\" not found")
    }
    static let textTooBroad = FlickrError(code: 3, message: "text is too broad: give longer or rarer words")
    /// An author's photos by upload date, when the author has very many
    /// photos and few of them in the span.
    static let spanTooBroad = FlickrError(code: 3, message: "Search is too broad: give text, or a narrower span of upload dates")
    /// Flickr's "search API not available", for a search by upload date
    /// alone on a database without sql/migrations/008.
    static let uploadDatesUnavailable = FlickrError(
        code: 10, message: "Sorry, searching by upload date without text is not available until the server's database is migrated")
    /// `sort=date-posted-asc` with words that more photos than a list reaches have.
    static let tooManyForOldestFirst = FlickrError(
        code: 3, message: "Oldest first is answered when at most \(FlickrAPI.maxResults) photos match: "
            + "give more words, a user_id or upload dates")
    static let textTooLong = FlickrError(code: 3, message: "text is too long (at most 200 bytes)")
}
