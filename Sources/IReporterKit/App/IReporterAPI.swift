/// The API of the original (`index.php` + `api.php`): its five commands in
/// the router, one instance per worker process.
public final class IReporterAPI {
    public let services: AppServices
    private let router: CommandRouter
    /// Time the last request spent in the database and in image work.
    public private(set) var lastTimings = (databaseMicros: Int64(0), imageMicros: Int64(0))

    public init(services: AppServices) {
        self.services = services
        var router = CommandRouter(sessions: services.sessions)
        let login = LoginCommand(services)
        router.on("login", login)
        router.on("register", RegisterCommand(services, login: login))
        router.on("upload", UploadCommand(services))
        router.on("logout", LogoutCommand(services))
        router.on("stream", StreamCommand(services))
        router.on("search", SearchCommand(services))
        self.router = router
    }

    public func handle(_ request: APIRequest) -> APIResponse {
        let databaseBefore = services.databaseMicros()
        let context = CommandContext(sessionCookie: request.sessionCookie, isSecure: request.isSecure,
                                     clientAddress: request.clientAddress)
        let response = router.route(request.parameters, in: context)
        context.removeTemporaryFiles()
        lastTimings = (services.databaseMicros() - databaseBefore, context.imageMicros)
        return response
    }
}

/// What the gateway hands to the API: the parameters and what the command
/// may need to know of the connection.
public struct APIRequest {
    public var parameters: any RequestParameters
    /// The `PHPSESSID` cookie's value, if any (not yet validated).
    public var sessionCookie: [UInt8]?
    /// The request came over HTTPS (the session cookie then gets `Secure`).
    public var isSecure: Bool
    /// The client's address as the web server saw it (login throttling).
    public var clientAddress: String

    public init(parameters: any RequestParameters, sessionCookie: [UInt8]? = nil, isSecure: Bool = false,
                clientAddress: String = "-") {
        self.parameters = parameters
        self.sessionCookie = sessionCookie
        self.isSecure = isSecure
        self.clientAddress = clientAddress
    }
}
