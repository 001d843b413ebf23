#if canImport(Glibc)
import Glibc
#endif

/// Turns one gateway request into an `APIRequest` (form, cookie), runs the
/// command and writes the answer with the headers the original sent. Also
/// answers the operator's ping and status paths, the photo sizes not made
/// yet, JSON-RPC and Flickr's REST. Every request goes through one pipeline
/// of middlewares (`GatewayPipeline`): the access log's record, the request
/// id, timing, the replica reads' scope; then its route.
final class APIResponder {
    /// What the access log and slow-request log say about one request.
    struct Record {
        var client = "-", method = "-", uri = "-", requestID = "-"
        var command = "-"
        /// The JSON-RPC or Flickr method(s) called; `ok` or the failure's name (`APIFailure.outcome`).
        var call = "-", outcome = "-"
        var bytes = 0
        var parseMicros: Int64 = 0
        var databaseMicros: Int64 = 0
        var imageMicros: Int64 = 0
        var totalMicros: Int64 = 0
    }

    private static let readChunk = 64 * 1024
    /// What the access log and the metrics keep of a form's command: every
    /// command's whole name, and no more of a client's.
    static let loggedCommandBytes = 32
    /// Room for the text fields and multipart framing beside the photo.
    private static let formOverhead = 1024 * 1024

    private let api: IReporterAPI
    private let uploadDirectory: String
    private let maxUploadBytes: Int
    private let operatorPages: OperatorPages?
    private let flickr: FlickrResponder?
    private let sizes: PhotoSizeResponder?
    private let mastodon: MastodonResponder?
    private let cookieSecureAlways: Bool
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readChunk, alignment: 16)
    /// Every request's steps, outermost first.
    let pipeline: GatewayPipeline
    /// Told each request's record once the pipeline's steps have filled it
    /// (its request id), before its route runs: the worker's note of what
    /// it serves, for the watchdog and the log.
    var requestBegins: ((Record) -> Void)?

    init(api: IReporterAPI, uploadDirectory: String, maxUploadBytes: Int, cookieSecureAlways: Bool = false,
         operatorPages: OperatorPages? = nil, flickr: FlickrResponder? = nil, sizes: PhotoSizeResponder? = nil,
         mastodon: MastodonResponder? = nil) {
        self.api = api
        self.flickr = flickr
        self.sizes = sizes
        self.mastodon = mastodon
        self.cookieSecureAlways = cookieSecureAlways
        self.uploadDirectory = uploadDirectory
        self.maxUploadBytes = maxUploadBytes
        self.operatorPages = operatorPages
        pipeline = GatewayPipeline(middlewares: [
            AccessLogMiddleware(), RequestIDMiddleware(), TimingMiddleware(databaseMicros: api.services.databaseMicros),
            ReplicaReadsMiddleware(reads: api.services.readYourWrites, sessions: api.services.sessions,
                                   tokens: api.services.accessTokens),
        ])
    }

    deinit { buffer.deallocate() }

    /// The API's commands (the metrics' labels).
    var commandNames: [String] { api.commandNames }

    /// A request Apache refused as too large (`LimitRequestBody`) arrives
    /// here as its `ErrorDocument 413` (deploy/apache/lamp*/.htaccess), with
    /// `REDIRECT_STATUS=413` and no body: it gets the same JSON answer as a
    /// photo over our own limit, as nginx's `error_page 413` gives.
    @discardableResult
    func respond(to request: GatewayRequest) -> Record {
        let page = operatorPages?.page(for: request)
        let route: GatewayRoute = if page != nil { .operatorPage }
            else if let sizes, sizes.handles(request) { .photoSize }
            else if Self.isJSONRPC(request.param("REQUEST_URI") ?? "-") { .jsonRPC }
            else if flickr != nil && FlickrResponder.isRESTPath(request) { .flickr }
            else if mastodon != nil && MastodonResponder.handles(request) { .mastodon }
            else { .form }
        let context = GatewayContext(request, route: route)
        let answer = pipeline.run(context) { context in
            requestBegins?(context.record)
            switch context.route {
            case .operatorPage:
                let body = page ?? []
                (context.record.command, context.record.outcome) = ("status", Self.outcome(ofCGIAnswer: body))
                return GatewayAnswer(body: body, loggedBytes: 0)
            case .photoSize:
                let body = sizes?.answer(request) ?? []
                (context.record.command, context.record.outcome) = ("size", Self.outcome(ofCGIAnswer: body))
                return GatewayAnswer(body: body)
            case .jsonRPC: return answerJSONRPC(context)
            case .flickr: return answerFlickr(context)
            case .mastodon: return answerMastodon(context)
            case .form: return answerForm(context)
            }
        }
        if request.write(answer.head + answer.body), let file = answer.file {
            _ = file.send { request.write($0) }
        }
        return context.record
    }

    /// The form API: the body read as a form, the command run, the
    /// original's headers (Apache keeps its 413 for an ErrorDocument's
    /// answer unless told otherwise).
    private func answerForm(_ context: GatewayContext) -> GatewayAnswer {
        let request = context.request
        let started = monotonicMicros()
        let refusedByWebServer = request.param("REDIRECT_STATUS") == "413"
        let form = refusedByWebServer ? .failure(.fileTooLarge(limit: maxUploadBytes)) : readForm(request)
        context.record.parseMicros = monotonicMicros() - started
        let response: APIResponse
        switch form {
        case .success(let form):
            context.record.command = form.field("command").map {
                AccessLog.field(String(decoding: $0.prefix(Self.loggedCommandBytes), as: UTF8.self))
            } ?? "-"
            // The spool files are the command context's: removed when answered, unless moved into place.
            response = api.handle(apiRequest(context, parameters: form))
            context.record.imageMicros = response.imageMicros
            context.record.outcome = response.outcome
        case .failure(let error):
            let failure = Self.failure(for: error)
            response = .failure(failure)
            context.record.outcome = failure.outcome
        }
        let status = refusedByWebServer ? Array("Status: 200 OK\r\n".utf8) : []
        return GatewayAnswer(head: status + Self.head(for: response), body: response.body, file: response.file)
    }

    /// Flickr's REST: the query string's and the form's parameters.
    private func answerFlickr(_ context: GatewayContext) -> GatewayAnswer {
        guard let flickr else { return answerForm(context) }
        let started = monotonicMicros()
        let form = context.request.param("REDIRECT_STATUS") == "413" ? .failure(.fileTooLarge(limit: maxUploadBytes))
            : readForm(context.request)
        context.record.parseMicros = monotonicMicros() - started
        let answer = flickr.answer(form: (try? form.get()) ?? FormData(), request: context.request)
        for path in (try? form.get())?.spooledPaths ?? [] { unlink(path) }
        (context.record.command, context.record.call, context.record.outcome) = ("flickr", answer.method, answer.outcome)
        return GatewayAnswer(body: answer.bytes)
    }

    /// The Mastodon-compatible API: the query string and the body (a form,
    /// multipart with its files spooled as the form API's, or JSON) as its
    /// parameters; the spool files removed once it is answered, unless an
    /// endpoint moved one into place.
    private func answerMastodon(_ context: GatewayContext) -> GatewayAnswer {
        guard let mastodon else { return answerForm(context) }
        let request = context.request
        let path = MastodonResponder.path(request)
        context.record.command = "mastodon"
        let started = monotonicMicros()
        let answer: MastodonAnswer
        if let method = MastodonResponder.method(request) {
            var spooled: [String] = []
            defer { for path in spooled { unlink(path) } }
            switch readMastodonParameters(request, method: method) {
            case .success(let (parameters, paths)):
                spooled = paths
                context.record.parseMicros = monotonicMicros() - started
                answer = mastodon.answer(request, method: method, parameters: parameters, clientAddress: context.record.client,
                                         isSecure: isSecure(request))
            case .failure(let error):
                answer = error.answer
            }
        } else if request.param("REQUEST_METHOD") == "OPTIONS" {
            answer = mastodon.preflight(request)
        } else {
            answer = MastodonError(status: 405, message: "Method not allowed").answer
        }
        context.record.call = AccessLog.field(String(path.prefix(64)))
        context.record.outcome = answer.status < 400 ? "ok" : "http-\(answer.status)"
        return GatewayAnswer(head: mastodon.head(answer, path: path), body: answer.body)
    }

    /// An answer that begins with its head (`Status: 503 …` when not 200):
    /// `ok`, or `http-<status>` from 400 on, as the Mastodon API's outcomes
    /// (a database down makes the readiness page a 503, which the metrics
    /// and the alerts must see).
    static func outcome(ofCGIAnswer answer: [UInt8]) -> String {
        let prefix = Array("Status: ".utf8)
        guard answer.starts(with: prefix) else { return "ok" }
        let digits = answer.dropFirst(prefix.count).prefix(3)
        guard digits.count == 3, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), digits.first! >= 0x34 else { return "ok" }
        return "http-" + String(decoding: digits, as: UTF8.self)
    }

    /// The query string's and the body's parameters, and the spool files of the body's file parts.
    private func readMastodonParameters(_ request: GatewayRequest,
                                        method: HTTPMethod) -> Result<(MastodonParameters, [String]), MastodonError> {
        let query = URLEncodedForm.parse(Array((request.param("QUERY_STRING") ?? "").utf8))
        guard method != .get else { return .success((MastodonParameters(query: query), [])) }
        let contentType = (request.param("CONTENT_TYPE") ?? "").lowercased()
        if contentType.hasPrefix("application/json") {
            var body: [UInt8] = []
            switch readBody(request, limit: Self.formOverhead, { body.append(contentsOf: $0) }) {
            case .whole: break
            case .overLimit: return .failure(MastodonError(status: 413, message: "The body is over \(Self.formOverhead / 1024) KiB"))
            case .cutShort: return .failure(MastodonError(status: 400, message: "The body ended before its Content-Length"))
            }
            // No body at all (a favourite, sent with a JSON Content-Type): no parameters, as Rails reads it.
            if body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
                return .success((MastodonParameters(query: query), []))
            }
            do {
                let json = try JSONParser.parse(body)
                return .success((try MastodonParameters(query: query, json: json), []))
            } catch let error as MastodonError {
                return .failure(error)
            } catch {
                return .failure(MastodonError(status: 400, message: "The body is no JSON: \(error)"))
            }
        }
        switch readForm(request, anyMethod: true) {
        case .success(let form): return .success((MastodonParameters(query: query, body: form), form.spooledPaths))
        case .failure(let error):
            let failure = Self.failure(for: error)
            let status = if case .fileTooLarge = error { 413 } else if case .spoolFailed = error { 503 } else { 400 }
            return .failure(MastodonError(status: status, message: failure.message))
        }
    }

    /// A body that could not be read as a form: answered before any command runs.
    enum RequestFailure: APIFailure {
        case malformed
        case photoTooLarge(limitBytes: Int)

        var message: String {
            switch self {
            case .malformed: "Malformed request"
            case .photoTooLarge(let limit): "Photo is too large (the limit is \(limit / (1024 * 1024)) MB)"
            }
        }
    }

    private static func failure(for error: FormDataError) -> any APIFailure {
        switch error {
        case .fileTooLarge(let limit): return RequestFailure.photoTooLarge(limitBytes: limit)
        case .malformed, .overLimit: return RequestFailure.malformed
        case .spoolFailed(let code):
            Log.error("spooling an upload: \(SystemError("create or write a spool file", code: code))")
            return UploadCommand.Failure.serverProblem
        }
    }

    /// What the command needs to know of the request besides its parameters.
    private func apiRequest(_ context: GatewayContext, parameters: any RequestParameters) -> APIRequest {
        let request = context.request
        var apiRequest = APIRequest(parameters: parameters, session: context.session, isSecure: isSecure(request),
                                    clientAddress: context.record.client, isCrossOrigin: Self.isCrossOrigin(request))
        apiRequest.arrived = RequestArrival.instant(of: request, clock: api.services.clock, wallClock: api.services.wallClock)
        return apiRequest
    }

    /// Whether the request came over HTTPS (or the operator says every request does).
    private func isSecure(_ request: GatewayRequest) -> Bool {
        cookieSecureAlways || request.param("HTTPS").map { !$0.isEmpty && $0 != "off" } ?? false
    }

    /// Whether a browser says the request comes from another origin (`WebOrigin`).
    static func isCrossOrigin(_ request: GatewayRequest) -> Bool { WebOrigin.isCrossOrigin(request) }

    /// `POST …/rpc`: the JSON-RPC endpoint (`/iReporter/rpc`).
    static func isJSONRPC(_ uri: String) -> Bool {
        (uri.firstIndex(of: "?").map { uri[..<$0] } ?? uri[...]).hasSuffix("/rpc")
    }

    /// A JSON-RPC request: a bounded `application/json` POST body. Whatever
    /// is wrong with it is answered in JSON-RPC's own terms.
    private func answerJSONRPC(_ context: GatewayContext) -> GatewayAnswer {
        let request = context.request
        let started = monotonicMicros()
        context.record.command = "rpc"
        context.record.outcome = "invalid-request"
        func refused(_ detail: String) -> GatewayAnswer {
            let response = APIResponse(body: JSONRPCService.error(.invalidRequest, detail: detail, id: nil))
            return GatewayAnswer(head: Self.head(for: response), body: response.body)
        }
        guard request.param("REQUEST_METHOD") == "POST" else { return refused("send a POST") }
        let contentType = (request.param("CONTENT_TYPE") ?? "").lowercased()
        guard contentType.hasPrefix("application/json") else { return refused("the body must be application/json") }
        let limit = JSONRPCService.maxBodyBytes
        var body: [UInt8] = []
        switch readBody(request, limit: limit, { body.append(contentsOf: $0) }) {
        case .whole: break
        case .overLimit: return refused("the body is over \(limit / 1024) KiB")
        case .cutShort: return refused("the body ended before its Content-Length")
        }
        context.record.parseMicros = monotonicMicros() - started
        let response = api.handle(jsonRPC: body, of: apiRequest(context, parameters: FormData()))
        context.record.imageMicros = response.imageMicros
        (context.record.outcome, context.record.call) = (response.outcome, response.call)
        return GatewayAnswer(head: Self.head(for: response), body: response.body)
    }

    enum BodyRead {
        case whole, overLimit
        /// Fewer bytes than `CONTENT_LENGTH`: the client went away mid-body
        /// (Apache streams it to us); a command must not run on a part of it.
        case cutShort
    }

    /// Reads the body in chunks into `consume`, up to `limit` bytes (a
    /// `CONTENT_LENGTH` over it is refused before reading).
    private func readBody<Failure: Error>(_ request: GatewayRequest, limit: Int,
                                          _ consume: (UnsafeRawBufferPointer) throws(Failure) -> Void) throws(Failure) -> BodyRead {
        let length = request.param("CONTENT_LENGTH").flatMap(Int.init)
        if let length, length > limit { return .overLimit }
        var total = 0
        while true {
            let count = request.read(into: buffer)
            if count > 0 {
                total += count
                if total > limit { return .overLimit }
                try consume(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            }
            if count < buffer.count { return total < (length ?? 0) ? .cutShort : .whole }
        }
    }

    /// The headers every answer of index.php carried (session_start() sent the
    /// cache headers), plus Content-Length and our cookie.
    static func head(for response: APIResponse) -> [UInt8] {
        var head = response.status == 204 ? "Status: 204 No Content\r\n" : ""
        head += "Content-Type: \(response.contentType)\r\nContent-Length: \(response.body.count + (response.file?.size ?? 0))\r\n"
        if let file = response.file { head += "Content-Disposition: attachment; filename=\"\(file.downloadName)\"\r\n" }
        for cookie in response.setCookie { head += "Set-Cookie: \(cookie)\r\n" }
        head += "Expires: Thu, 19 Nov 1981 08:52:00 GMT\r\nCache-Control: no-store, no-cache, must-revalidate\r\nPragma: no-cache\r\n\r\n"
        return Array(head.utf8)
    }

    /// `$_POST` and `$_FILES`: multipart streamed to spool files, urlencoded
    /// read into memory (bounded), anything else (a GET) an empty form.
    /// `anyMethod`: a PUT's or PATCH's body too (the Mastodon-compatible API's).
    private func readForm(_ request: GatewayRequest, anyMethod: Bool = false) -> Result<FormData, FormDataError> {
        guard request.param("REQUEST_METHOD") == "POST" || anyMethod else { return .success(FormData()) }
        let contentType = request.param("CONTENT_TYPE") ?? ""
        if let boundary = MultipartParser.boundary(fromContentType: contentType) {
            let parser = MultipartParser(boundary: boundary, limits: MultipartLimits(maxFileBytes: maxUploadBytes),
                                         spoolDirectory: uploadDirectory)
            var total = 0
            defer { Metrics.count(.uploadBytes, Int64(total)) }
            do {
                let counted = { (chunk: UnsafeRawBufferPointer) throws(FormDataError) in
                    total += chunk.count
                    try parser.feed(chunk)
                }
                switch try readBody(request, limit: maxUploadBytes + Self.formOverhead, counted) {
                case .whole: return .success(try parser.finish())
                case .overLimit: return .failure(.fileTooLarge(limit: maxUploadBytes))
                case .cutShort: return .failure(.malformed("the body ended before its Content-Length"))
                }
            } catch {
                return .failure(error)
            }
        }
        if let length = request.param("CONTENT_LENGTH").flatMap(Int.init), length > maxUploadBytes + Self.formOverhead {
            return .failure(.fileTooLarge(limit: maxUploadBytes))
        }
        if contentType.lowercased().hasPrefix("application/x-www-form-urlencoded") {
            var body: [UInt8] = []
            switch readBody(request, limit: Self.formOverhead, { body.append(contentsOf: $0) }) {
            case .whole: return .success(URLEncodedForm.parse(body))
            case .overLimit: return .failure(.overLimit("urlencoded body"))
            case .cutShort: return .failure(.malformed("the body ended before its Content-Length"))
            }
        }
        if contentType.lowercased().hasPrefix("multipart/form-data") { return .failure(.malformed("no boundary")) }
        return .success(FormData())
    }
}
