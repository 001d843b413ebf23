#if canImport(Glibc)
import Glibc
#endif

/// The objects a worker (or a CGI process) serves with, made from the
/// configuration in one place.
extension Configuration {
    var apiPolicy: IReporterAPI.Policy {
        var policy = IReporterAPI.Policy()
        policy.maxImagePixels = maxImagePixels
        policy.maxUploadBytes = maxUploadBytes
        policy.uploadsPerHour = uploadRateLimit
        policy.passwordHashing = passwordHashing
        policy.concurrentHashes = passwordHashConcurrency > 0
            ? passwordHashConcurrency : max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        policy.streamCacheMillis = Int64(streamCacheMillis)
        return policy
    }

    var sessionStore: SessionStore {
        switch sessionBackend {
        case .files:
            SessionStore(directory: sessionDirectory, idleTimeout: sessionIdleTimeout, absoluteTimeout: sessionAbsoluteTimeout)
        }
    }

    /// The repair of the upload folder, on a connection of its own.
    func uploadRepair() -> UploadRepair {
        UploadRepair(files: PhotoFiles(directory: uploadDirectory), database: DatabaseConnection(settings: database),
                     maxImagePixels: maxImagePixels)
    }

    func makeResponder(database: DatabaseConnection, shared: SharedState, operatorPages: OperatorPages?) -> APIResponder {
        let api = IReporterAPI(database: database, sessions: sessionStore, files: PhotoFiles(directory: uploadDirectory),
                               policy: apiPolicy, limiter: shared.limiter, streamGeneration: shared.streamGeneration,
                               hashingGate: shared.hashingGate)
        return APIResponder(api: api, uploadDirectory: uploadDirectory, maxUploadBytes: maxUploadBytes,
                            cookieSecureAlways: cookieSecureAlways, operatorPages: operatorPages)
    }
}

/// What the workers share, made by the supervisor before it forks them and
/// kept across reloads.
struct SharedState: Sendable {
    /// Login and upload counters.
    var limiter = RateLimiter()
    /// Bumped by every upload: each worker's cached stream is then stale.
    var streamGeneration = StreamCache.Generation()
    /// Bounds the Argon2 hashes computed at once (memory).
    var hashingGate = HashingGate()
}
