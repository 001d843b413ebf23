/// What kind of failure a command reported: the JSON-RPC adapter answers
/// each kind with its own error code (docs/API.md); the form API answers
/// them all as `{"error":"…"}`. A command's own failures say their kind
/// in its file, and its descriptor lists them.
public enum FailureKind: Sendable, CaseIterable {
    case invalidParameters, other, authorization, notFound, notAllowed, rateLimited, unavailable

    /// The JSON-RPC error code.
    public var code: Int {
        switch self {
        case .other: -32000
        case .authorization: -32001
        case .notFound: -32002
        case .notAllowed: -32003
        case .rateLimited: -32004
        case .unavailable: -32005
        case .invalidParameters: JSONRPCService.StandardError.invalidParams.rawValue
        }
    }

    /// What the code means (`rpc.discover`'s errors).
    public var summary: String {
        switch self {
        case .invalidParameters: "Invalid params: a parameter's value is refused (the message says which)"
        case .other: "the command's own failure (its text as the form API answers it)"
        case .authorization: "Authorization required"
        case .notFound: "no such photo, comment, account or notification"
        case .notAllowed: "not allowed (someone else's, or a request from another web site)"
        case .rateLimited: "too many requests, try again later"
        case .unavailable: "the service is temporarily unavailable, or busy: try again"
        }
    }
}

extension AuthorizationRequired { public var kind: FailureKind { .authorization } }
extension ServiceUnavailable { public var kind: FailureKind { .unavailable } }
extension CrossOriginRefused { public var kind: FailureKind { .notAllowed } }
extension StreamExtra.Unknown { var kind: FailureKind { .invalidParameters } }
extension PhotoEffect.Unknown { var kind: FailureKind { .invalidParameters } }
