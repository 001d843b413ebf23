/// What a Mastodon-compatible endpoint answers: a status, headers (`Link`,
/// the rate limit's) and a body, JSON unless an OAuth page says otherwise.
public struct MastodonAnswer: Sendable {
    public var status = 200
    public var contentType = "application/json; charset=utf-8"
    public var headers: [(name: String, value: String)] = []
    public var body: [UInt8]

    public init(status: Int = 200, contentType: String = "application/json; charset=utf-8",
                headers: [(name: String, value: String)] = [], body: [UInt8]) {
        (self.status, self.contentType, self.headers, self.body) = (status, contentType, headers, body)
    }

    public static func json(_ body: [UInt8], status: Int = 200) -> MastodonAnswer { MastodonAnswer(status: status, body: body) }

    /// `{}`: what Mastodon answers where it has nothing to say (a dismissed notification).
    public static let emptyObject = json(Array("{}".utf8))
    /// `[]`: a list of what we do not have (lists, filters, …).
    public static let emptyList = json(Array("[]".utf8))

    public static func html(_ page: [UInt8], status: Int = 200) -> MastodonAnswer {
        MastodonAnswer(status: status, contentType: "text/html; charset=utf-8", body: page)
    }

    /// A 302 to `location` (OAuth's redirect back to the client).
    public static func redirect(to location: String) -> MastodonAnswer {
        MastodonAnswer(status: 302, contentType: "text/plain; charset=utf-8", headers: [("Location", location)], body: [])
    }

    /// The status line's reason phrase for the codes the API answers.
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 302: "Found"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Payload Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Entity"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}

/// A Mastodon-shaped failure, thrown anywhere under an endpoint:
/// `{"error":"…"}` with its status (and, for OAuth's errors, RFC 6749's
/// `error_description`).
public struct MastodonError: Error, Equatable, Sendable {
    public let status: Int
    public let message: String
    public let description: String?

    public init(status: Int, message: String, description: String? = nil) {
        (self.status, self.message, self.description) = (status, message, description)
    }

    public static let notFound = MastodonError(status: 404, message: "Record not found")
    public static let invalidToken = MastodonError(status: 401, message: "The access token is invalid")
    public static let outsideScopes = MastodonError(status: 403, message: "This action is outside the authorized scopes")
    public static let userRequired = MastodonError(status: 422, message: "This method requires an authenticated user")
    public static let unavailable = MastodonError(status: 503, message: "Service temporarily unavailable, please try again")

    public var answer: MastodonAnswer {
        var json = PHPJSONWriter()
        json.raw("{\"error\":")
        json.string(message)
        if let description {
            json.raw(",\"error_description\":")
            json.string(description)
        }
        json.raw("}")
        return .json(json.bytes, status: status)
    }
}
