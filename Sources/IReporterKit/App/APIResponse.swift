/// What a command answers: always HTTP 200 with a JSON body (or the empty body
/// the original gave for logout and unknown commands), as the app expects.
public struct APIResponse: Equatable, Sendable {
    public var body: [UInt8]
    public var setCookie: [String] = []
    /// `application/json`, except for a rendered image (`preview`).
    public var contentType = "application/json"
    /// 200, except for a JSON-RPC batch of notifications only (204: no body at all).
    public var status = 200
    /// Sent after `body` (then empty), a download (`export`).
    public var file: AnswerFile?
    /// For the access log: `ok` or the failure's name (each call's, for a JSON-RPC batch).
    public var outcome = "-"
    /// For the access log: the JSON-RPC method(s) called.
    public var call = "-"
    /// For the access log: time spent in image work.
    public var imageMicros: Int64 = 0

    public init(body: [UInt8], setCookie: [String] = [], contentType: String = "application/json") {
        self.body = body
        self.setCookie = setCookie
        self.contentType = contentType
    }

    public static let empty = APIResponse(body: [])

    /// The same answer to the client (what the access log is told aside).
    public static func == (lhs: APIResponse, rhs: APIResponse) -> Bool {
        (lhs.body, lhs.setCookie, lhs.contentType, lhs.status) == (rhs.body, rhs.setCookie, rhs.contentType, rhs.status)
            && lhs.file === rhs.file
    }

    /// `{"error":"…"}`
    public static func failure(_ failure: any APIFailure) -> APIResponse {
        var json = PHPJSONWriter()
        json.raw("{\"error\":")
        json.string(failure.message)
        json.raw("}")
        return APIResponse(body: json.bytes)
    }
}
