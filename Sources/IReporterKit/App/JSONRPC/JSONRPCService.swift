/// JSON-RPC 2.0 (`POST /iReporter/rpc`, application/json), a second
/// adapter in front of the command router: each method is a command, its
/// named parameters the form fields, the same session cookie and rules.
/// Complete to the specification: batches (at most `maxBatch` calls),
/// notifications (no `id`: run, not answered), `id` echoed as sent, the
/// standard errors, the commands' failures as the codes of `FailureKind`
/// with the original's text. Every answer is JSON (a batch of notifications
/// only gets HTTP 204, as the specification says: nothing at all).
final class JSONRPCService {
    static let maxBatch = 20
    /// The largest body accepted (uploads are multipart only).
    static let maxBodyBytes = 256 * 1024

    /// The specification's own errors.
    enum StandardError: Int {
        case parseError = -32700, invalidRequest = -32600, methodNotFound = -32601, invalidParams = -32602, internalError = -32603

        var message: String {
            switch self {
            case .parseError: "Parse error"
            case .invalidRequest: "Invalid Request"
            case .methodNotFound: "Method not found"
            case .invalidParams: "Invalid params"
            case .internalError: "Internal error"
            }
        }
    }

    private let router: CommandRouter
    /// `rpc.discover`'s answer, made once from the descriptors.
    private let document: [UInt8]

    init(router: CommandRouter) {
        self.router = router
        document = OpenRPCDocument.json(router.descriptors)
    }

    /// Answers one HTTP request's body: nil when there is nothing to
    /// answer (notifications only). Each call runs in a context of its own,
    /// made with the session cookie as the calls before it left it (a batch
    /// may log in, then upload); `finished` sees each context once its call
    /// is answered. Also returns the last context that logged in or out:
    /// the HTTP answer sets its cookie.
    func answer(_ body: [UInt8], sessionCookie: [UInt8]?, context makeContext: ([UInt8]?) -> CommandContext,
                finished: (CommandContext) -> Void) -> (body: [UInt8]?, sessionChanged: CommandContext?) {
        let request: JSONValue
        do {
            // A byte order mark before the text, as some Windows tools write: RFC 8259 lets it be ignored.
            request = try JSONParser.parse(body.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(body.dropFirst(3)) : body)
        } catch {
            return (Self.error(.parseError, detail: error.description, id: nil), nil)
        }
        var cookie = sessionCookie
        var sessionChanged: CommandContext?
        var passwordChecks = 0
        func run(_ call: JSONValue) -> [UInt8]? {
            let context = makeContext(cookie)
            let answer = self.call(call, in: context, passwordChecks: &passwordChecks)
            switch context.sessionChange {
            case .started(let id)?: cookie = Array(id.utf8); sessionChanged = context
            case .ended?: cookie = nil; sessionChanged = context
            case nil: break
            }
            context.removeTemporaryFiles()
            finished(context)
            return answer
        }
        guard case .array(let calls) = request else { return (run(request), sessionChanged) }
        guard !calls.isEmpty else { return (Self.error(.invalidRequest, detail: "an empty batch", id: nil), nil) }
        guard calls.count <= Self.maxBatch else {
            return (Self.error(.invalidRequest, detail: "a batch holds at most \(Self.maxBatch) calls", id: nil), nil)
        }
        let answers = router.batch(of: calls.compactMap(Self.methodAndParameters), { calls.compactMap(run) })
        guard !answers.isEmpty else { return (nil, sessionChanged) }
        return ([UInt8(ascii: "[")] + answers.joined(separator: [UInt8(ascii: ",")]) + [UInt8(ascii: "]")], sessionChanged)
    }

    /// The method and named parameters of a call that has both (what the
    /// router reads ahead for; `call` checks the rest).
    private static func methodAndParameters(_ call: JSONValue) -> (name: String, parameters: any RequestParameters)? {
        guard case .string(let method)? = call["method"], case .object(let named)? = call["params"] else { return nil }
        return (String(decoding: method, as: UTF8.self), JSONParameters(members: named))
    }

    /// One call's answer; nil for a notification.
    /// `passwordChecks`: the calls of this body so far that checked a password.
    private func call(_ call: JSONValue, in context: CommandContext, passwordChecks: inout Int) -> [UInt8]? {
        guard case .object = call else { return Self.error(.invalidRequest, detail: "a call is an object", id: nil) }
        let id = call["id"]
        let idText: [UInt8]?
        switch id {
        case nil: idText = nil
        case .null?: idText = Array("null".utf8)
        case .number(let text)?: idText = text
        case .string(let bytes)?:
            var json = PHPJSONWriter()
            json.string(bytes)
            idText = json.bytes
        case .bool?, .array?, .object?:
            return Self.error(.invalidRequest, detail: "id must be a string, a number or null", id: nil)
        }
        let answerID = idText ?? Array("null".utf8)
        guard call["jsonrpc"] == .string(Array("2.0".utf8)) else {
            return Self.error(.invalidRequest, detail: "jsonrpc must be \"2.0\"", id: answerID)
        }
        guard case .string(let methodBytes)? = call["method"] else {
            return Self.error(.invalidRequest, detail: "method must be a string", id: answerID)
        }
        let method = String(decoding: methodBytes, as: UTF8.self)
        context.method = method
        var members: [(String, JSONValue)] = []
        switch call["params"] {
        // No parameters, as clients send them (@open-rpc/client-js: `[]`).
        case nil, .null?, .array([])?: break
        case .object(let named)?: members = named
        default: return idText == nil ? nil : Self.error(.invalidParams, detail: "params are named (an object)", id: answerID)
        }
        let outcome = result(of: method, JSONParameters(members: members), in: context, passwordChecks: &passwordChecks)
        switch outcome {
        case .success: context.outcome = "ok"
        case .failure(let error): context.outcome = error.outcome
        }
        guard let idText else { return nil } // a notification: run, not answered
        switch outcome {
        case .success(let result):
            return Array(#"{"jsonrpc":"2.0","result":"#.utf8) + result + Array(#","id":"#.utf8) + idText + [UInt8(ascii: "}")]
        case .failure(let error):
            return Self.error(error, id: idText)
        }
    }

    struct CallError: Error {
        let code: Int
        let message: String
        /// More on a standard error (the specification's `data`).
        var data: String?
        /// The access log's name for it: the command's failure, or the standard error's (`method-not-found`).
        let outcome: String

        init(_ standard: StandardError, _ detail: String? = nil) {
            code = standard.rawValue
            message = standard.message
            data = detail
            outcome = outcomeName(String(describing: standard))
        }

        init(_ failure: any APIFailure) {
            code = failure.kind.code
            message = failure.message
            outcome = failure.outcome
        }
    }

    /// One password check a body: a batch of 20 right logins was 20
    /// Argon2id hashes for one request, which no throttle counts (they
    /// succeed), and held every worker behind the hashing slots.
    struct OnePasswordCheckABatch: APIFailure {
        var message: String { "A batch may check one password: send each login, registration or password change on its own" }
        var kind: FailureKind { .rateLimited }
    }

    private func result(of method: String, _ parameters: JSONParameters, in context: CommandContext,
                        passwordChecks: inout Int) -> Result<[UInt8], CallError> {
        if method == "rpc.discover" { return .success(document) }
        guard let descriptor = router.descriptor(named: method) else { return .failure(CallError(.methodNotFound, method)) }
        if let name = parameters.firstUnusable {
            return .failure(CallError(.invalidParams, "\(name) must be a string, a number, a boolean or null"))
        }
        // Not one of rpc.discover's methods; answered so, rather than "not found", for the form command it is.
        guard descriptor.isJSONRPCMethod else {
            let file = descriptor.fileParts.isEmpty ? "answers a file: send it as a form" : "takes a file: send it as multipart/form-data"
            return .failure(CallError(.invalidParams, "\(method) \(file) to /iReporter/"))
        }
        if let name = parameters.firstUndeclared(descriptor.parameters) {
            return .failure(CallError(.invalidParams, "\(method) has no parameter \(name)"))
        }
        if descriptor.checksAPassword {
            passwordChecks += 1
            if passwordChecks > 1 { return .failure(CallError(OnePasswordCheckABatch())) }
        }
        guard let outcome = router.invoke(method, parameters, in: context) else {
            return .failure(CallError(.methodNotFound, method))
        }
        switch outcome {
        case .output(let output): return .success(Self.result(output.json))
        case .failure(let failure): return .failure(CallError(failure))
        }
    }

    /// The command's answer as a result: `{"result":X}` gives X, an empty
    /// answer (logout) null, any other object itself.
    static func result(_ json: [UInt8]) -> [UInt8] {
        let prefix = Array(#"{"result":"#.utf8)
        if json.isEmpty { return Array("null".utf8) }
        if json.starts(with: prefix), json.last == UInt8(ascii: "}") { return Array(json[prefix.count..<json.count - 1]) }
        return json
    }

    static func error(_ standard: StandardError, detail: String?, id: [UInt8]?) -> [UInt8] {
        error(CallError(standard, detail), id: id ?? Array("null".utf8))
    }

    /// `{"jsonrpc":"2.0","error":{"code":…,"message":…[,"data":…]},"id":…}`
    static func error(_ error: CallError, id: [UInt8]) -> [UInt8] {
        var json = PHPJSONWriter()
        json.raw(#","message":"#)
        json.string(error.message)
        if let data = error.data {
            json.raw(#","data":"#)
            json.string(data)
        }
        json.raw(#"},"id":"#)
        return Array(#"{"jsonrpc":"2.0","error":{"code":\#(error.code)"#.utf8) + json.bytes + id + [UInt8(ascii: "}")]
    }
}
