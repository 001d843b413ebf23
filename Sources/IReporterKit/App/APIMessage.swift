/// What a command gets from the protocol layer.
public struct APIRequest {
    public var form: FormData
    /// The `PHPSESSID` cookie's value, if any (not yet validated).
    public var sessionCookie: [UInt8]?
    /// The request came over HTTPS (the session cookie then gets `Secure`).
    public var isSecure: Bool
    /// The client's address as the web server saw it (login throttling).
    public var clientAddress: String

    public init(form: FormData, sessionCookie: [UInt8]? = nil, isSecure: Bool = false, clientAddress: String = "-") {
        self.form = form
        self.sessionCookie = sessionCookie
        self.isSecure = isSecure
        self.clientAddress = clientAddress
    }
}

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
    public static func error(_ message: APIError) -> APIResponse {
        var json = PHPJSONWriter()
        json.raw("{\"error\":")
        json.string(message.text)
        json.raw("}")
        return APIResponse(body: json.bytes)
    }
}

/// The error strings the app can show. The first six are the original's,
/// byte for byte (the app reacts to "Authorization required" by showing the
/// login screen); the rest are ours, for failures the original did not check.
public enum APIError: Error, Equatable, Sendable {
    case usernameExists
    case registrationFailed
    case authorizationFailed
    case authorizationRequired
    case uploadMalfunction
    case uploadOnServerProblem
    case streamBroken
    case notAJPEG
    case photoTooLarge(limitBytes: Int)
    case photoTooManyPixels(limit: Int)
    case malformedRequest
    case serviceUnavailable
    case tooManyLoginAttempts(seconds: Int64)
    case tooManyUploads
    case invalidUsername
    case invalidTitle

    public var text: String {
        switch self {
        case .usernameExists: "Username already exists"
        case .registrationFailed: "Registration failed"
        case .authorizationFailed: "Authorization failed"
        case .authorizationRequired: "Authorization required"
        case .uploadMalfunction: "Upload malfunction"
        case .uploadOnServerProblem: "Upload on server problem"
        case .streamBroken: "Photo stream is broken"
        case .notAJPEG: "The photo is not a valid JPEG image"
        case .photoTooLarge(let limit): "Photo is too large (the limit is \(limit / (1024 * 1024)) MB)"
        case .photoTooManyPixels(let limit): "The photo has too many pixels (the limit is \(limit / 1_000_000) megapixels)"
        case .malformedRequest: "Malformed request"
        case .serviceUnavailable: "The service is temporarily unavailable, please try again"
        case .tooManyLoginAttempts(let seconds): "Too many failed logins, try again in \(seconds) seconds"
        case .tooManyUploads: "Too many uploads, please try again later"
        case .invalidUsername: "Usernames cannot contain control characters"
        case .invalidTitle: "Titles cannot contain control characters"
        }
    }
}
