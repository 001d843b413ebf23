#if canImport(Glibc)
import Glibc
#endif

/// Turns one gateway request into an `APIRequest` (form, cookie), runs the
/// command and writes the answer with the headers the original sent. Also
/// answers the operator's ping and status paths.
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
    /// Room for the text fields and multipart framing beside the photo.
    private static let formOverhead = 1024 * 1024

    private let api: IReporterAPI
    private let uploadDirectory: String
    private let maxUploadBytes: Int
    private let operatorPages: OperatorPages?
    private let flickr: FlickrResponder?
    private let sizes: PhotoSizeResponder?
    private let cookieSecureAlways: Bool
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readChunk, alignment: 16)

    init(api: IReporterAPI, uploadDirectory: String, maxUploadBytes: Int, cookieSecureAlways: Bool = false,
         operatorPages: OperatorPages? = nil, flickr: FlickrResponder? = nil, sizes: PhotoSizeResponder? = nil) {
        self.api = api
        self.flickr = flickr
        self.sizes = sizes
        self.cookieSecureAlways = cookieSecureAlways
        self.uploadDirectory = uploadDirectory
        self.maxUploadBytes = maxUploadBytes
        self.operatorPages = operatorPages
    }

    deinit { buffer.deallocate() }

    /// The API's commands (the metrics' labels).
    var commandNames: [String] { api.commandNames }

    /// The web server's id for the request: nginx's `$request_id` (the
    /// shipped configurations pass it as REQUEST_ID), or mod_unique_id's.
    static func requestID(_ request: GatewayRequest) -> String? {
        request.param("REQUEST_ID") ?? request.param("UNIQUE_ID")
    }

    /// A request Apache refused as too large (`LimitRequestBody`) arrives
    /// here as its `ErrorDocument 413` (deploy/apache/lamp*/.htaccess), with
    /// `REDIRECT_STATUS=413` and no body: it gets the same JSON answer as a
    /// photo over our own limit, as nginx's `error_page 413` gives.
    @discardableResult
    func respond(to request: GatewayRequest) -> Record {
        let started = monotonicMicros()
        // Copied now: libfcgi frees the parameters when the request is finished.
        var record = Record(client: request.param("REMOTE_ADDR") ?? "-", method: request.param("REQUEST_METHOD") ?? "-",
                            uri: request.param("REQUEST_URI") ?? "-",
                            requestID: AccessLog.field(Self.requestID(request) ?? ""))
        // Echoed so that a client's report finds its log lines; only an id
        // the log writes as it is (no byte of it can break the header).
        let echo = record.requestID == "-" || record.requestID != Self.requestID(request) ? [] : Array("X-Request-Id: \(record.requestID)\r\n".utf8)
        if let page = operatorPages?.page(for: request) {
            request.write(echo + page)
            record.command = "status"
            record.outcome = "ok"
            record.totalMicros = monotonicMicros() - started
            return record
        }
        if let sizes, sizes.handles(request) {
            let answer = sizes.answer(request)
            request.write(echo + answer)
            record.command = "size"
            record.outcome = "ok"
            record.bytes = answer.count
            record.totalMicros = monotonicMicros() - started
            return record
        }
        if Self.isJSONRPC(record.uri) {
            record.command = "rpc"
            let response = answerJSONRPC(request, record: &record)
            request.write(echo + Self.head(for: response) + response.body)
            record.bytes = response.body.count
            record.totalMicros = monotonicMicros() - started
            return record
        }
        var response: APIResponse
        let refusedByWebServer = request.param("REDIRECT_STATUS") == "413"
        let form = refusedByWebServer ? .failure(.fileTooLarge(limit: maxUploadBytes)) : readForm(request)
        record.parseMicros = monotonicMicros() - started
        if let flickr, FlickrResponder.isRESTPath(request) {
            let answer = flickr.answer(form: (try? form.get()) ?? FormData(), request: request)
            for path in (try? form.get())?.spooledPaths ?? [] { unlink(path) }
            request.write(echo + answer.bytes)
            record.command = "flickr"
            (record.call, record.outcome) = (answer.method, answer.outcome)
            record.bytes = answer.bytes.count
            record.totalMicros = monotonicMicros() - started
            return record
        }
        switch form {
        case .success(let form):
            record.command = form.field("command").map { AccessLog.field(String(decoding: $0.prefix(16), as: UTF8.self)) } ?? "-"
            // The spool files are the command context's: removed when answered, unless moved into place.
            response = api.handle(apiRequest(request, parameters: form, client: record.client))
            record.databaseMicros = api.lastTimings.databaseMicros
            record.imageMicros = api.lastTimings.imageMicros
            record.outcome = api.lastOutcome.outcome
        case .failure(let error):
            let failure = Self.failure(for: error)
            response = .failure(failure)
            record.outcome = failure.outcome
        }
        // Apache keeps its 413 for an ErrorDocument's answer unless told otherwise.
        request.write(echo + (refusedByWebServer ? Array("Status: 200 OK\r\n".utf8) : []) + Self.head(for: response) + response.body)
        record.bytes = response.body.count
        record.totalMicros = monotonicMicros() - started
        return record
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
    private func apiRequest(_ request: GatewayRequest, parameters: any RequestParameters, client: String) -> APIRequest {
        APIRequest(parameters: parameters, sessionCookie: Cookies.sessionID(request.param("HTTP_COOKIE")),
                   isSecure: cookieSecureAlways || request.param("HTTPS").map { !$0.isEmpty && $0 != "off" } ?? false,
                   clientAddress: client, isCrossOrigin: Self.isCrossOrigin(request))
    }

    /// Whether a browser says the request comes from another origin (`WebOrigin`).
    static func isCrossOrigin(_ request: GatewayRequest) -> Bool { WebOrigin.isCrossOrigin(request) }

    /// `POST …/rpc`: the JSON-RPC endpoint (`/iReporter/rpc`).
    static func isJSONRPC(_ uri: String) -> Bool {
        (uri.firstIndex(of: "?").map { uri[..<$0] } ?? uri[...]).hasSuffix("/rpc")
    }

    /// A JSON-RPC request: a bounded `application/json` POST body. Whatever
    /// is wrong with it is answered in JSON-RPC's own terms.
    private func answerJSONRPC(_ request: GatewayRequest, record: inout Record) -> APIResponse {
        let started = monotonicMicros()
        record.outcome = "invalid-request"
        func refused(_ detail: String) -> APIResponse {
            APIResponse(body: JSONRPCService.error(.invalidRequest, detail: detail, id: nil))
        }
        guard request.param("REQUEST_METHOD") == "POST" else { return refused("send a POST") }
        let contentType = (request.param("CONTENT_TYPE") ?? "").lowercased()
        guard contentType.hasPrefix("application/json") else { return refused("the body must be application/json") }
        let limit = JSONRPCService.maxBodyBytes
        if let length = request.param("CONTENT_LENGTH").flatMap(Int.init), length > limit {
            return refused("the body is over \(limit / 1024) KiB")
        }
        var body: [UInt8] = []
        while true {
            let count = request.read(into: buffer)
            body.append(contentsOf: buffer[..<max(count, 0)])
            if body.count > limit { return refused("the body is over \(limit / 1024) KiB") }
            if count < buffer.count { break }
        }
        record.parseMicros = monotonicMicros() - started
        let response = api.handle(jsonRPC: body, of: apiRequest(request, parameters: FormData(), client: record.client))
        record.databaseMicros = api.lastTimings.databaseMicros
        record.imageMicros = api.lastTimings.imageMicros
        (record.outcome, record.call) = api.lastOutcome
        return response
    }

    /// The headers every answer of index.php carried (session_start() sent the
    /// cache headers), plus Content-Length and our cookie.
    static func head(for response: APIResponse) -> [UInt8] {
        var head = response.status == 204 ? "Status: 204 No Content\r\n" : ""
        head += "Content-Type: \(response.contentType)\r\nContent-Length: \(response.body.count)\r\n"
        for cookie in response.setCookie { head += "Set-Cookie: \(cookie)\r\n" }
        head += "Expires: Thu, 19 Nov 1981 08:52:00 GMT\r\nCache-Control: no-store, no-cache, must-revalidate\r\nPragma: no-cache\r\n\r\n"
        return Array(head.utf8)
    }

    /// `$_POST` and `$_FILES`: multipart streamed to spool files, urlencoded
    /// read into memory (bounded), anything else (a GET) an empty form.
    private func readForm(_ request: GatewayRequest) -> Result<FormData, FormDataError> {
        guard request.param("REQUEST_METHOD") == "POST" else { return .success(FormData()) }
        let bodyLimit = maxUploadBytes + Self.formOverhead
        if let length = request.param("CONTENT_LENGTH").flatMap(Int.init), length > bodyLimit {
            return .failure(.fileTooLarge(limit: maxUploadBytes))
        }
        let contentType = request.param("CONTENT_TYPE") ?? ""
        if let boundary = MultipartParser.boundary(fromContentType: contentType) {
            let parser = MultipartParser(boundary: boundary, limits: MultipartLimits(maxFileBytes: maxUploadBytes),
                                         spoolDirectory: uploadDirectory)
            var total = 0
            defer { Metrics.count(.uploadBytes, Int64(total)) }
            do {
                while true {
                    let count = request.read(into: buffer)
                    if count > 0 {
                        total += count
                        if total > bodyLimit { return .failure(.fileTooLarge(limit: maxUploadBytes)) }
                        try parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                    }
                    if count < buffer.count { break }
                }
                return .success(try parser.finish())
            } catch {
                return .failure(error)
            }
        }
        if contentType.lowercased().hasPrefix("application/x-www-form-urlencoded") {
            var body: [UInt8] = []
            while true {
                let count = request.read(into: buffer)
                body.append(contentsOf: buffer[..<max(count, 0)])
                if body.count > Self.formOverhead { return .failure(.overLimit("urlencoded body")) }
                if count < buffer.count { break }
            }
            return .success(URLEncodedForm.parse(body))
        }
        if contentType.lowercased().hasPrefix("multipart/form-data") { return .failure(.malformed("no boundary")) }
        return .success(FormData())
    }
}
