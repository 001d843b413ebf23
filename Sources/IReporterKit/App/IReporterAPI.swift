/// The API of the original (`index.php` + `api.php`): its five commands in
/// the router, and those the tutorial left for later; one instance per
/// worker process.
public final class IReporterAPI {
    public let services: AppServices
    let router: CommandRouter
    private let rpc: JSONRPCService
    /// Time the last request spent in the database and in image work.
    public private(set) var lastTimings = (databaseMicros: Int64(0), imageMicros: Int64(0))
    /// What the access log says of the last request: its outcome (`ok` or
    /// the failure's name) and, for JSON-RPC, the method called. A batch
    /// gives each call's, comma-separated, in order.
    public private(set) var lastOutcome = (outcome: "-", method: "-")

    public init(services: AppServices) {
        self.services = services
        var router = CommandRouter(sessions: services.sessions)
        let login = LoginCommand(services)
        router.register(login)
        router.register(RegisterCommand(services, login: login))
        router.register(UploadCommand(services))
        router.register(LogoutCommand(services))
        router.register(StreamCommand(services))
        router.register(CommentCommand(services))
        router.register(CommentsCommand(services))
        router.register(UncommentCommand(services))
        router.register(VoteCommand(services, vote: .like))
        router.register(VoteCommand(services, vote: .dislike))
        router.register(VoteCommand(services, vote: nil))
        router.register(DeleteCommand(services))
        router.register(EffectsCommand())
        router.register(PreviewCommand(services))
        router.register(SearchCommand(services))
        self.router = router
        rpc = JSONRPCService(router: router)
    }

    public func handle(_ request: APIRequest) -> APIResponse {
        let databaseBefore = services.databaseMicros()
        let context = CommandContext(sessionCookie: request.sessionCookie, isSecure: request.isSecure,
                                     clientAddress: request.clientAddress, isCrossOrigin: request.isCrossOrigin)
        for path in request.parameters.spooledPaths { context.removeWhenAnswered(path) }
        beginReads(request)
        defer { services.readYourWrites?.endRequest() }
        let response = router.route(request.parameters, in: context)
        context.removeTemporaryFiles()
        lastTimings = (services.databaseMicros() - databaseBefore, context.imageMicros)
        lastOutcome = (context.outcome ?? "unknown-command", "-")
        return response
    }

    /// Whose writes the request's replica reads must show: the user of the
    /// session it came with, looked up only if a read or a write asks.
    private func beginReads(_ request: APIRequest) {
        guard let reads = services.readYourWrites else { return }
        let sessions = services.sessions, cookie = request.sessionCookie
        reads.beginRequest { try? SignedInUser.of(CommandContext(sessionCookie: cookie), in: sessions)?.id }
    }

    /// A JSON-RPC 2.0 body (`POST /iReporter/rpc`): one call or a batch.
    public func handle(jsonRPC body: [UInt8], of request: APIRequest) -> APIResponse {
        let databaseBefore = services.databaseMicros()
        var imageMicros: Int64 = 0
        var calls: [CommandContext] = []
        beginReads(request)
        defer { services.readYourWrites?.endRequest() }
        let (answer, sessionChanged) = rpc.answer(body, sessionCookie: request.sessionCookie) { cookie in
            CommandContext(sessionCookie: cookie, isSecure: request.isSecure, clientAddress: request.clientAddress,
                           isCrossOrigin: request.isCrossOrigin)
        } finished: {
            imageMicros += $0.imageMicros
            calls.append($0)
        }
        lastTimings = (services.databaseMicros() - databaseBefore, imageMicros)
        // No call at all: the body was no JSON-RPC (parse error, empty or oversized batch).
        lastOutcome = calls.isEmpty ? ("invalid-request", "-")
            : (calls.map { $0.outcome ?? "invalid-request" }.joined(separator: ","),
               calls.map { $0.method.map(AccessLog.field) ?? "-" }.joined(separator: ","))
        var response = APIResponse(body: answer ?? [], setCookie: sessionChanged.map(CommandRouter.cookies(for:)) ?? [])
        if answer == nil { response.status = 204 }
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
    /// A browser sent it from another web site (`Origin`, `Sec-Fetch-Site`).
    public var isCrossOrigin: Bool

    public init(parameters: any RequestParameters, sessionCookie: [UInt8]? = nil, isSecure: Bool = false,
                clientAddress: String = "-", isCrossOrigin: Bool = false) {
        self.parameters = parameters
        self.sessionCookie = sessionCookie
        self.isSecure = isSecure
        self.clientAddress = clientAddress
        self.isCrossOrigin = isCrossOrigin
    }
}
