/// One step of every request's life, hummingbird's way (`RouterMiddleware`):
/// it sees the request on the way in and its answer on the way out, and
/// calls `next` for the rest of the pipeline and the route.
protocol GatewayMiddleware {
    func handle(_ context: GatewayContext, next: (GatewayContext) -> GatewayAnswer) -> GatewayAnswer
}

/// Where a request goes, chosen from its path before the pipeline runs.
enum GatewayRoute: Equatable {
    /// The operator's ping, status and readiness pages.
    case operatorPage
    /// A photo size not made yet (`PhotoSizeResponder`).
    case photoSize
    /// `POST …/rpc`.
    case jsonRPC
    /// `…/services/rest/`.
    case flickr
    /// The 2012 form API, `POST /iReporter/`.
    case form
    /// The Mastodon-compatible API at the host's root (`MastodonResponder`).
    case mastodon

    /// Whether the route reads the stores for an API caller (the replica reads' scope).
    var isAPI: Bool { self == .jsonRPC || self == .flickr || self == .form || self == .mastodon }
}

/// What the pipeline knows of one request: the request, its route, the
/// session it came with (read at most once, whoever asks), and the access
/// log's record that the steps fill in.
final class GatewayContext {
    let request: any GatewayRequest
    let route: GatewayRoute
    let session: RequestSession
    var record: APIResponder.Record

    init(_ request: any GatewayRequest, route: GatewayRoute) {
        self.request = request
        self.route = route
        // Flickr's callers and the Mastodon API's (tokens) are never a cookie's session.
        session = RequestSession(cookie: route == .flickr || route == .mastodon ? nil : Cookies.sessionID(request.param("HTTP_COOKIE")))
        // Copied now: libfcgi frees the parameters when the request is finished.
        record = APIResponder.Record(client: request.param("REMOTE_ADDR") ?? "-", method: request.param("REQUEST_METHOD") ?? "-",
                                     uri: request.param("REQUEST_URI") ?? "-")
    }
}

/// What a route answers: the bytes written (head and body), and how many of
/// them the access log counts (`bytes=`: the body of an API answer).
struct GatewayAnswer {
    var head: [UInt8]
    var body: [UInt8]
    /// Sent in chunks after the body (a download).
    var file: AnswerFile?
    var loggedBytes: Int

    init(head: [UInt8] = [], body: [UInt8], file: AnswerFile? = nil, loggedBytes: Int? = nil) {
        (self.head, self.body, self.file) = (head, body, file)
        self.loggedBytes = loggedBytes ?? body.count + (file?.size ?? 0)
    }
}

/// The middlewares in order, outermost first, around a route.
struct GatewayPipeline {
    let middlewares: [any GatewayMiddleware]

    func run(_ context: GatewayContext, route: (GatewayContext) -> GatewayAnswer) -> GatewayAnswer {
        func step(_ index: Int, _ context: GatewayContext) -> GatewayAnswer {
            guard index < middlewares.count else { return route(context) }
            return middlewares[index].handle(context) { step(index + 1, $0) }
        }
        return step(0, context)
    }
}

/// The access log's record, closed: the one place where the request's
/// command, call, outcome, size and times are all known (the worker writes
/// the line once the answer is sent).
struct AccessLogMiddleware: GatewayMiddleware {
    func handle(_ context: GatewayContext, next: (GatewayContext) -> GatewayAnswer) -> GatewayAnswer {
        let answer = next(context)
        context.record.bytes = answer.loggedBytes
        return answer
    }
}

/// The web server's id for the request (nginx's `$request_id`, which the
/// shipped configurations pass as REQUEST_ID, or mod_unique_id's): in the
/// log, and echoed as `X-Request-Id` so that a client's report finds its
/// lines; only an id the log writes as it is (no byte of it can break the header).
struct RequestIDMiddleware: GatewayMiddleware {
    func handle(_ context: GatewayContext, next: (GatewayContext) -> GatewayAnswer) -> GatewayAnswer {
        let sent = context.request.param("REQUEST_ID") ?? context.request.param("UNIQUE_ID")
        context.record.requestID = AccessLog.field(sent ?? "")
        var answer = next(context)
        if context.record.requestID != "-" && context.record.requestID == sent {
            answer.head = Array("X-Request-Id: \(context.record.requestID)\r\n".utf8) + answer.head
        }
        return answer
    }
}

/// The request's total time and its time in the database.
struct TimingMiddleware: GatewayMiddleware {
    /// Time spent waiting on the database so far (`AppServices.databaseMicros`).
    let databaseMicros: () -> Int64

    func handle(_ context: GatewayContext, next: (GatewayContext) -> GatewayAnswer) -> GatewayAnswer {
        let started = monotonicMicros()
        let databaseBefore = databaseMicros()
        let answer = next(context)
        if context.route.isAPI { context.record.databaseMicros = databaseMicros() - databaseBefore }
        context.record.totalMicros = monotonicMicros() - started
        return answer
    }
}

/// With replicas, whose writes an API request's reads must show: the user
/// of its session, or of its access token for the Mastodon-compatible API
/// (read only if a read or a write asks; Flickr's callers have none), from
/// its start to its answer.
struct ReplicaReadsMiddleware: GatewayMiddleware {
    let reads: (any ReadYourWrites)?
    let sessions: any SessionStore
    let tokens: any AccessTokens

    func handle(_ context: GatewayContext, next: (GatewayContext) -> GatewayAnswer) -> GatewayAnswer {
        guard let reads, context.route.isAPI else { return next(context) }
        let (session, sessions, tokens) = (context.session, sessions, tokens)
        if context.route == .mastodon {
            let token = MastodonRequest.bearer(context.request.param("HTTP_AUTHORIZATION"))
            reads.beginRequest { try? token.flatMap(tokens.grant(forToken:))?.userID }
        } else {
            reads.beginRequest { try? session.user(in: sessions)?.id }
        }
        defer { reads.endRequest() }
        return next(context)
    }
}
