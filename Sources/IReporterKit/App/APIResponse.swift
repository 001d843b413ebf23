/// What a command answers: always HTTP 200 with a JSON body (or the empty body
/// the original gave for logout and unknown commands), as the app expects.
public struct APIResponse: Equatable, Sendable {
    public var body: [UInt8]
    public var setCookie: [String] = []

    public init(body: [UInt8], setCookie: [String] = []) {
        self.body = body
        self.setCookie = setCookie
    }

    public static let empty = APIResponse(body: [])

    /// `{"error":"…"}`
    public static func failure(_ failure: any APIFailure) -> APIResponse {
        var json = PHPJSONWriter()
        json.raw("{\"error\":")
        json.string(failure.message)
        json.raw("}")
        return APIResponse(body: json.bytes)
    }
}
