/// The API of the original (`index.php` + `api.php`): its five commands in
/// the router, and those the tutorial left for later; one instance per
/// worker process. What every request's life shares (timing, the replica
/// reads' scope, the access log) is the gateway's pipeline
/// (`Gateway/GatewayPipeline.swift`); here, a request's commands run.
public final class IReporterAPI {
    public let services: AppServices
    let router: CommandRouter
    private let rpc: JSONRPCService

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
        router.register(ChangePasswordCommand(services))
        router.register(ExportCommand(services))
        router.register(DeleteAccountCommand(services))
        router.register(FollowCommand(services, follows: true))
        router.register(FollowCommand(services, follows: false))
        router.register(FollowListCommand(services, .followers))
        router.register(FollowListCommand(services, .following))
        router.register(FamiliarFollowersCommand(services))
        router.register(PersonCommand(services))
        router.register(FeedCommand(services))
        router.register(LikedCommand(services))
        router.register(NotificationsCommand(services))
        router.register(DismissCommand(services))
        router.register(NotificationChannelCommand(services))
        router.register(MarkersCommand(services))
        router.register(MarkCommand(services))
        router.register(AuthorizedAppsCommand(services))
        router.register(RevokeAppCommand(services))
        self.router = router
        rpc = JSONRPCService(router: router)
    }

    /// The commands' names (the JSON-RPC methods too): the metrics' labels.
    public var commandNames: [String] { router.descriptors.map(\.name) }

    /// A form's command. The answer says, for the access log, its outcome
    /// (`ok`, the failure's name, `unknown-command`) and time in image work.
    public func handle(_ request: APIRequest) -> APIResponse {
        let context = CommandContext(session: request.session, isSecure: request.isSecure, clientAddress: request.clientAddress,
                                     isCrossOrigin: request.isCrossOrigin, arrived: request.arrived ?? services.clock.now)
        for path in request.parameters.spooledPaths { context.removeWhenAnswered(path) }
        var response = router.route(request.parameters, in: context)
        context.removeTemporaryFiles()
        response.outcome = context.outcome ?? "unknown-command"
        response.imageMicros = context.imageMicros
        return response
    }

    /// A JSON-RPC 2.0 body (`POST /iReporter/rpc`): one call or a batch.
    /// The answer's outcome and call give each call's, comma-separated, in order.
    public func handle(jsonRPC body: [UInt8], of request: APIRequest) -> APIResponse {
        var calls: [CommandContext] = []
        let arrived = request.arrived ?? services.clock.now
        let (answer, sessionChanged) = rpc.answer(body, sessionCookie: request.sessionCookie) { cookie in
            // The request's own session while no call has changed it: read once for all of them.
            CommandContext(session: cookie == request.sessionCookie ? request.session : RequestSession(cookie: cookie),
                           isSecure: request.isSecure, clientAddress: request.clientAddress, isCrossOrigin: request.isCrossOrigin,
                           arrived: arrived)
        } finished: {
            calls.append($0)
        }
        var response = APIResponse(body: answer ?? [], setCookie: sessionChanged.map(CommandRouter.cookies(for:)) ?? [])
        if answer == nil { response.status = 204 }
        // No call at all: the body was no JSON-RPC (parse error, empty or oversized batch).
        response.outcome = calls.isEmpty ? "invalid-request" : calls.map { $0.outcome ?? "invalid-request" }.joined(separator: ",")
        response.call = calls.isEmpty ? "-" : calls.map { $0.method.map(AccessLog.field) ?? "-" }.joined(separator: ",")
        response.imageMicros = calls.reduce(0) { $0 + $1.imageMicros }
        return response
    }
}

/// What the gateway hands to the API: the parameters and what the command
/// may need to know of the connection.
public struct APIRequest {
    public var parameters: any RequestParameters
    /// The session it came with (the gateway's, read at most once).
    public var session: RequestSession
    /// The `PHPSESSID` cookie's value, if any (not yet validated).
    public var sessionCookie: [UInt8]? { session.cookie }
    /// The request came over HTTPS (the session cookie then gets `Secure`).
    public var isSecure: Bool
    /// The client's address as the web server saw it (login throttling).
    public var clientAddress: String
    /// A browser sent it from another web site (`Origin`, `Sec-Fetch-Site`).
    public var isCrossOrigin: Bool
    /// When it arrived (`CommandContext.arrived`); nil: when the API is given it.
    public var arrived: Instant?

    public init(parameters: any RequestParameters, sessionCookie: [UInt8]? = nil, isSecure: Bool = false,
                clientAddress: String = "-", isCrossOrigin: Bool = false) {
        self.init(parameters: parameters, session: RequestSession(cookie: sessionCookie), isSecure: isSecure,
                  clientAddress: clientAddress, isCrossOrigin: isCrossOrigin)
    }

    public init(parameters: any RequestParameters, session: RequestSession, isSecure: Bool = false,
                clientAddress: String = "-", isCrossOrigin: Bool = false) {
        self.parameters = parameters
        self.session = session
        self.isSecure = isSecure
        self.clientAddress = clientAddress
        self.isCrossOrigin = isCrossOrigin
    }
}
