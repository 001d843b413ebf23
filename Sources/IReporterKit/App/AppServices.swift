/// What the commands work with: the stores (chosen by configuration), the
/// limits, and the password hasher. One per worker process.
public struct AppServices {
    /// Limits and defences (configuration keys in docs/CONFIGURATION.md).
    public struct Policy: Sendable {
        public var maxImagePixels = 50_000_000
        /// What one decode may hold for a progressive photo's coefficients.
        public var maxDecodeBytes = Configuration().maxDecodeMemoryMiB << 20
        /// Decodes run at once by all the workers sharing a `DecodeGate`.
        public var concurrentDecodes = 2
        /// Uploads per user per hour; 0 = no limit.
        public var uploadsPerHour = 120
        public var passwordHashing = PasswordHasher.Parameters()
        /// Argon2 hashes computed at once by all the workers sharing a
        /// `HashingGate` (each holds `passwordHashing.memoryKiB`).
        public var concurrentHashes = 2
        /// How long a rendered stream may be served while nothing changed
        /// through this server (see `StreamCache`); 0 = always query.
        public var streamCacheMillis: Int64 = 1000
        /// How long a rendered `search` or Flickr photo list may be served
        /// while nothing changed (see `AnswerCache`); 0 = always render.
        /// Off here (the App's unit tests); the configuration's
        /// `search_cache_ms` sets it.
        public var searchCacheMillis: Int64 = 0
        /// Comments per user per hour; 0 = no limit.
        public var commentsPerHour = 120
        /// Likes, dislikes and unvotes per user per hour; 0 = no limit.
        public var votesPerHour = 600
        /// `preview`s per user per hour; 0 = no limit.
        public var previewsPerHour = 300

        public init() {}
    }

    public var users: any UserStore
    public var photos: any PhotoStore
    public var photoFiles: any PhotoFileStore
    public var comments: any CommentStore
    public var votes: any VoteStore
    public var search: any PhotoSearch
    public var sessions: any SessionStore
    public var counters: any SharedCounters
    public var policy: Policy
    public var hasher: PasswordHasher
    /// Shared by the workers of one supervisor; nil: no bound (one process).
    public var decodeGate: DecodeGate?
    /// Time spent waiting on the database so far (the access log's db_ms).
    public var databaseMicros: () -> Int64
    /// What the caches' ages are read on; a test steps a `ManualClock`.
    public var clock: any TimeSource = MonotonicClock()
    /// The times stored with photos and comments (`now`).
    public var wallClock: any WallClock = RealtimeClock()
    /// Unix seconds, from `wallClock`.
    public var now: () -> Int64 { { [wallClock] in wallClock.unixSeconds } }
    /// Where new photos are announced (`live_publish_url`); nil: nowhere.
    public var live: (any LiveFeed)?
    /// Told of each request when reads may go to a replica; nil: one database.
    public var readYourWrites: (any ReadYourWrites)?

    public init(users: any UserStore, photos: any PhotoStore, photoFiles: any PhotoFileStore,
                comments: any CommentStore, votes: any VoteStore, search: any PhotoSearch, sessions: any SessionStore,
                counters: any SharedCounters, policy: Policy = Policy(), hashingGate: HashingGate? = nil,
                decodeGate: DecodeGate? = nil, databaseMicros: @escaping () -> Int64 = { 0 }) {
        self.users = users
        self.photos = photos
        self.photoFiles = photoFiles
        self.comments = comments
        self.votes = votes
        self.search = search
        self.sessions = sessions
        self.counters = counters
        self.policy = policy
        hasher = PasswordHasher(parameters: policy.passwordHashing, gate: hashingGate,
                                concurrentHashes: policy.concurrentHashes)
        self.decodeGate = decodeGate
        self.databaseMicros = databaseMicros
    }

    /// Every store in memory: the App's unit tests, no service needed.
    public static func inMemory(policy: Policy = Policy()) throws -> AppServices {
        let users = InMemoryUserStore()
        let photos = InMemoryPhotoStore(users: users)
        return AppServices(users: users, photos: photos, photoFiles: try InMemoryPhotoFiles(), comments: photos, votes: photos,
                           search: InMemoryPhotoSearch(photos: photos),
                           sessions: InMemorySessionStore(), counters: InMemoryCounters(), policy: policy)
    }
}
