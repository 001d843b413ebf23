#if canImport(Glibc)
import Glibc
#endif

/// What the commands work with: the stores (chosen by configuration), the
/// limits, and the password hasher. One per worker process.
public struct AppServices {
    /// Limits and defences: the configuration's settings, under their own
    /// names and with their defaults (`policy.uploadRateLimit`,
    /// docs/CONFIGURATION.md), and what the commands compute from them.
    @dynamicMemberLookup
    public struct Policy: Sendable {
        public var settings: Configuration

        /// `configuration`'s, with the worker caches off when reads go to
        /// replicas: a copy read from a lagging replica would be kept under
        /// the current stream generation and served to the user whose write
        /// it misses.
        public init(_ configuration: Configuration = Configuration()) {
            settings = configuration
            if !configuration.replicas.isEmpty {
                settings.streamCacheMillis = 0
                settings.searchCacheMillis = 0
            }
        }

        public subscript<Value>(dynamicMember setting: WritableKeyPath<Configuration, Value>) -> Value {
            get { settings[keyPath: setting] }
            set { settings[keyPath: setting] = newValue }
        }

        /// What one decode may hold for a progressive photo's coefficients.
        public var maxDecodeBytes: Int { settings.maxDecodeMemoryMiB << 20 }
        /// Decodes run at once by all the workers sharing a `DecodeGate`.
        public var concurrentDecodes: Int { Self.orCPUs(settings.imageDecodeConcurrency) }
        /// Argon2 hashes computed at once by all the workers sharing a
        /// `HashingGate` (each holds `passwordHashing.memoryKiB`).
        public var concurrentHashes: Int { Self.orCPUs(settings.passwordHashConcurrency) }

        /// 0 in a setting of slots: the number of CPUs.
        private static func orCPUs(_ slots: Int) -> Int { slots > 0 ? slots : onlineCPUs }
        /// Read once per process: glibc reads /sys for it at every call, and
        /// every upload and password check asks.
        private static let onlineCPUs = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    public var users: any UserStore
    public var photos: any PhotoStore
    public var photoFiles: any PhotoFileStore
    public var comments: any CommentStore
    public var votes: any VoteStore
    public var follows: any FollowStore
    public var notifications: any NotificationStore
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
    /// The Mastodon-compatible API's access tokens.
    public var accessTokens: any AccessTokens = InMemoryAccessTokens()
    /// The Mastodon-compatible API's media waiting for a status, and the photos' descriptions.
    public var media: any MediaStore = InMemoryMediaStore()
    /// Where each person stopped reading their home timeline and notifications.
    public var markers: any ReadMarkerStore = InMemoryReadMarkerStore()
    /// OAuth's apps, tokens and codes (`OAuthServer`, whose tokens
    /// `accessTokens` checks in the server).
    public var oauth: any OAuthStore = InMemoryOAuthStore()
    /// How many accounts and photos (the instance's and NodeInfo's figures).
    public var usage: any UsageStatistics
    /// Where the workers of one supervisor keep answers for each other; nil: each its own.
    var sharedAnswers: SharedAnswerTable?
    /// The full stream's answer for the host's nginx (`stream_answer_file`); nil: none.
    var streamAnswer: StreamAnswerFile?

    public init(users: any UserStore, photos: any PhotoStore, photoFiles: any PhotoFileStore,
                comments: any CommentStore, votes: any VoteStore, follows: any FollowStore, notifications: any NotificationStore,
                search: any PhotoSearch, sessions: any SessionStore,
                counters: any SharedCounters, policy: Policy = Policy(), hashingGate: HashingGate? = nil,
                decodeGate: DecodeGate? = nil, databaseMicros: @escaping () -> Int64 = { 0 }) {
        self.users = users
        self.photos = photos
        usage = InMemoryUsageStatistics(users: users, photos: photos)
        self.photoFiles = photoFiles
        self.comments = comments
        self.votes = votes
        self.follows = follows
        self.notifications = notifications
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
                           follows: InMemoryFollowStore(users: users, photos: photos),
                           notifications: InMemoryNotificationStore(users: users, photos: photos),
                           search: InMemoryPhotoSearch(photos: photos),
                           sessions: InMemorySessionStore(), counters: InMemoryCounters(), policy: policy)
    }
}
