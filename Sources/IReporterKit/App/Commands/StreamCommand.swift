/// `stream`: the newest 50 photos, or the one with `IdPhoto`.
public struct StreamCommand: Command {
    public struct Input: CommandInput {
        /// 0: the whole stream (PHP's `(int)` of a missing or non-numeric value).
        public let photoID: Int64

        public init(from parameters: any RequestParameters) {
            photoID = PHPStrings.intCast(parameters.field("IdPhoto") ?? [])
        }
    }

    public enum Failure: APIFailure {
        case broken
        public var message: String { "Photo stream is broken" }
    }

    /// How many photos the stream shows, newest first (the original's LIMIT).
    public static let length = 50

    private let photos: any PhotoStore
    private let cache: StreamCache

    public init(_ services: AppServices) {
        photos = services.photos
        cache = StreamCache(counters: services.counters, maxAgeMillis: services.policy.streamCacheMillis)
    }

    public func run(_ input: Input, in context: CommandContext) throws -> RenderedJSON {
        do {
            if input.photoID == 0 {
                return RenderedJSON(json: try cache.answer { PhotoList(photos: try photos.newest(limit: Self.length)).json })
            }
            return RenderedJSON(json: PhotoList(photos: try photos.photo(id: input.photoID).map { [$0] } ?? []).json)
        } catch let error as any StoreError where !error.isUnavailable {
            // The original's answer when its query failed (a broken table).
            Log.error("stream: \(error)")
            throw Failure.broken
        }
    }
}
