/// The objects a worker (or a CGI process) serves with, made from the
/// configuration in one place.
extension Configuration {
    var apiPolicy: IReporterAPI.Policy {
        var policy = IReporterAPI.Policy()
        policy.maxImagePixels = maxImagePixels
        policy.maxUploadBytes = maxUploadBytes
        policy.uploadsPerHour = uploadRateLimit
        policy.passwordHashing = passwordHashing
        return policy
    }

    var sessionStore: SessionStore {
        SessionStore(directory: sessionDirectory, idleTimeout: sessionIdleTimeout, absoluteTimeout: sessionAbsoluteTimeout)
    }

    func makeResponder(database: DatabaseConnection, limiter: RateLimiter, operatorPages: OperatorPages?) -> APIResponder {
        let api = IReporterAPI(database: database, sessions: sessionStore, files: PhotoFiles(directory: uploadDirectory),
                               policy: apiPolicy, limiter: limiter)
        return APIResponder(api: api, uploadDirectory: uploadDirectory, maxUploadBytes: maxUploadBytes,
                            cookieSecureAlways: cookieSecureAlways, operatorPages: operatorPages)
    }
}
