#if canImport(Glibc)
import Glibc
#endif

/// The objects a worker (or a CGI process) serves with, made from the
/// configuration in one place: the one place where a backend is chosen.
extension Configuration {
    var apiPolicy: AppServices.Policy {
        var policy = AppServices.Policy()
        policy.maxImagePixels = maxImagePixels
        policy.maxDecodeBytes = maxDecodeMemoryMiB << 20
        policy.concurrentDecodes = imageDecodeConcurrency > 0
            ? imageDecodeConcurrency : max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        policy.uploadsPerHour = uploadRateLimit
        policy.passwordHashing = passwordHashing
        policy.concurrentHashes = passwordHashConcurrency > 0
            ? passwordHashConcurrency : max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        policy.streamCacheMillis = Int64(streamCacheMillis)
        policy.searchCacheMillis = Int64(searchCacheMillis)
        policy.commentsPerHour = commentRateLimit
        policy.votesPerHour = voteRateLimit
        return policy
    }

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

    /// The repair of the upload folder, on a connection of its own.
    func uploadRepair() -> UploadRepair {
        UploadRepair(files: uploadFolder,
                     photos: MariaDBPhotoStore(database: DatabaseConnection(settings: database)),
                     maxImagePixels: maxImagePixels, maxDecodeBytes: maxDecodeMemoryMiB << 20)
    }

    func services(database: DatabaseConnection, shared: SharedState) -> AppServices {
        let counters = counters(shared)
        var services = AppServices(users: MariaDBUserStore(database: database), photos: MariaDBPhotoStore(database: database),
                    photoFiles: uploadFolder, comments: MariaDBCommentStore(database: database),
                    votes: MariaDBVoteStore(database: database),
                    search: CachedPhotoSearch(MariaDBPhotoSearch(database: database), counters: counters,
                                              maxAgeMillis: Int64(searchCacheMillis)),
                    sessions: sessionStore,
                    counters: counters, policy: apiPolicy, hashingGate: shared.hashingGate,
                    decodeGate: shared.decodeGate,
                    databaseMicros: { database.busyMicros })
        if !livePublishURL.isEmpty {
            services.live = NchanPublisher(url: livePublishURL)
            if services.live == nil { Log.warning("live_publish_url is not http://HOST[:PORT]/PATH: no live stream") }
        }
        return services
    }

    func makeResponder(database: DatabaseConnection, shared: SharedState, operatorPages: OperatorPages?) -> APIResponder {
        let services = services(database: database, shared: shared)
        return APIResponder(api: IReporterAPI(services: services),
                            uploadDirectory: uploadDirectory, maxUploadBytes: maxUploadBytes,
                            cookieSecureAlways: cookieSecureAlways, operatorPages: operatorPages,
                            flickr: FlickrResponder(api: FlickrAPI(services: services, apiKeys: flickrAPIKeySet)),
                            sizes: PhotoSizeResponder(sizes: PhotoSizes(photos: services.photos,
                                                                        folder: uploadFolder,
                                                                        policy: services.policy, decodeGate: services.decodeGate)))
    }
}
