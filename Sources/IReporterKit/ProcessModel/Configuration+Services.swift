#if canImport(Glibc)
import Glibc
#endif

/// The objects a worker (or a CGI process) serves with, made from the
/// configuration in one place: the one place where a backend is chosen.
extension Configuration {
    var apiPolicy: AppServices.Policy { AppServices.Policy(self) }

    /// `flickr_api_keys` as a set (empty: any key).
    var flickrAPIKeySet: Set<String> {
        Set(flickrAPIKeys.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty })
    }

    var sessionStore: any SessionStore {
        switch sessionBackend {
        case .files:
            SessionFiles(directory: sessionDirectory, idleTimeout: sessionIdleTimeout, absoluteTimeout: sessionAbsoluteTimeout,
                         maxPerUser: sessionMaxPerUser)
        case .redis:
            // `load` refuses session_store = redis without redis_url.
            RedisSessionStore(redis: RedisConnection(settings: redisSettings!), idleTimeout: sessionIdleTimeout,
                              absoluteTimeout: sessionAbsoluteTimeout, maxPerUser: sessionMaxPerUser,
                              locking: redisSessionLocking)
        }
    }

    /// The counters every host must see alike: in Redis when there is one,
    /// else the host's shared memory. (The Argon2 and decode slots bound
    /// this host's memory: they stay in `shared` whatever this says.)
    func counters(_ shared: SharedState) -> any SharedCounters {
        guard let redisSettings else { return shared.counters }
        return RedisCounters(settings: redisSettings)
    }

    var uploadFolder: UploadFolder { UploadFolder(directory: uploadDirectory, legacyNames: legacyPhotoURLs) }

    /// A worker's photo store (with a bucket, its own connection to it).
    func photoFileStore() -> any PhotoFileStore & PhotoSizeFiles {
        switch photoBackend {
        case .files:
            uploadFolder
        case .s3:
            bucketStore()
        }
    }

    /// The bucket of `photo_store = s3`, on a connection of its own.
    func bucketStore() -> S3PhotoFileStore {
        // `load` refuses photo_store = s3 without s3_url.
        S3PhotoFileStore(client: S3Client(settings: s3Settings!), spoolDirectory: uploadDirectory, legacyNames: legacyPhotoURLs)
    }

    /// The repair of the upload folder or the bucket, on a connection of its own.
    func uploadRepair() -> PhotoRepair {
        let photos = MariaDBPhotoStore(database: DatabaseConnection(settings: database))
        switch photoBackend {
        case .files:
            return PhotoRepair(files: uploadFolder, photos: photos,
                               maxImagePixels: maxImagePixels, maxDecodeBytes: maxDecodeMemoryMiB << 20)
        case .s3:
            return PhotoRepair(files: bucketStore(), photos: photos,
                               maxImagePixels: maxImagePixels, maxDecodeBytes: maxDecodeMemoryMiB << 20)
        }
    }

    /// The replica reads of a worker (nil: no `db_replicas`): each worker
    /// on one replica, spread by process id; write positions where every
    /// host sees them when there is a Redis, else beside the sessions.
    func replicaReads(primary: DatabaseConnection) -> ReplicaReads? {
        // Without db_url the credentials are in an option file, which would
        // also give the primary's host (`warnings` says so).
        guard !replicas.isEmpty, database.fromURL else { return nil }
        let replica = DatabaseConnection(settings: replicaSettings(Int(getpid()) % replicas.count))
        let positions: any WritePositions = redisSettings.map { RedisWritePositions(settings: $0) }
            ?? WritePositionFiles(directory: sessionDirectory)
        return ReplicaReads(primary: primary, replica: replica, positions: positions, waitMillis: replicaWaitMillis)
    }

    /// The file the host's nginx answers `stream` from: nil without
    /// `stream_answer_file` or with the caches off (`stream_cache_ms = 0`,
    /// replicas; `warnings` says so). With Redis (several hosts) it is kept
    /// only while the host's refresher listens for the others' changes.
    func streamAnswerFile(_ policy: AppServices.Policy) -> StreamAnswerFile? {
        guard !streamAnswerFile.isEmpty, policy.streamCacheMillis > 0 else { return nil }
        return StreamAnswerFile(path: streamAnswerFile, maxAgeMillis: Int64(policy.streamCacheMillis),
                                needsListener: redisSettings != nil)
    }

    func services(database: DatabaseConnection, shared: SharedState, photoFiles: any PhotoFileStore) -> AppServices {
        let counters = counters(shared)
        let replicaReads = replicaReads(primary: database)
        let reads: any DatabaseReading = replicaReads ?? database
        var services = AppServices(users: MariaDBUserStore(database: database),
                    photos: MariaDBPhotoStore(database: database, reads: reads),
                    photoFiles: photoFiles,
                    comments: MariaDBCommentStore(database: database, reads: reads),
                    votes: MariaDBVoteStore(database: database),
                    follows: MariaDBFollowStore(database: database, reads: reads),
                    notifications: MariaDBNotificationStore(database: database),
                    search: CachedPhotoSearch(MariaDBPhotoSearch(database: reads), counters: counters,
                                              maxAgeMillis: Int64(apiPolicy.searchCacheMillis)),
                    sessions: sessionStore,
                    counters: counters, policy: apiPolicy, hashingGate: shared.hashingGate,
                    decodeGate: shared.decodeGate,
                    databaseMicros: { database.busyMicros + (replicaReads?.replica.busyMicros ?? 0) })
        services.readYourWrites = replicaReads
        services.media = MariaDBMediaStore(database: database)
        services.markers = MariaDBReadMarkerStore(database: database)
        services.oauth = MariaDBOAuthStore(database: database)
        services.accessTokens = OAuthAccessTokens(server: services.oauthServer, counters: counters, clock: services.clock)
        services.sharedAnswers = shared.answers
        if let answerFile = streamAnswerFile(apiPolicy) {
            // One host: the counters remove it at every change. Several: each host's listener does.
            (counters as? SharedMemoryCounters)?.streamAnswer = answerFile
            services.streamAnswer = answerFile
        }
        services.usage = CachedUsageStatistics(MariaDBUsageStatistics(database: reads), clock: services.clock)
        if !livePublishURL.isEmpty && livePublishKey.count >= 16 { // else a warning at start
            services.live = NchanPublisher(url: livePublishURL, key: livePublishKey)
            if services.live == nil {
                Log.warning("live_publish_url is not http://HOST[:PORT]/PATH, or live_publish_key is not letters, digits, "
                            + "-, _ and .: no live stream")
            }
        }
        return services
    }

    func makeResponder(database: DatabaseConnection, shared: SharedState, operatorPages: OperatorPages?) -> APIResponder {
        let photoFiles = photoFileStore()
        let services = services(database: database, shared: shared, photoFiles: photoFiles)
        let api = IReporterAPI(services: services)
        return APIResponder(api: api,
                            uploadDirectory: uploadDirectory, maxUploadBytes: maxUploadBytes,
                            cookieSecureAlways: cookieSecureAlways, operatorPages: operatorPages,
                            flickr: FlickrResponder(api: FlickrAPI(services: services, apiKeys: flickrAPIKeySet), publicURL: publicURL),
                            sizes: PhotoSizeResponder(sizes: PhotoSizes(photos: services.photos, files: photoFiles,
                                                                        policy: services.policy, decodeGate: services.decodeGate),
                                                      // The folder's 2012 names are the web server's to serve.
                                                      bucket: photoFiles as? S3PhotoFileStore),
                            mastodon: MastodonResponder(api: MastodonAPI(api: api), publicURL: publicURL))
    }
}
