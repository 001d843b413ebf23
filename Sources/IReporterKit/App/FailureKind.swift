/// What kind of failure a command reported: the JSON-RPC adapter answers
/// each kind with its own error code (docs/API.md); the form API answers
/// them all as `{"error":"…"}`.
public enum FailureKind: Sendable {
    case authorization, notFound, notAllowed, rateLimited, unavailable, invalidParameters, other

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
}

extension AuthorizationRequired { public var kind: FailureKind { .authorization } }
extension ServiceUnavailable { public var kind: FailureKind { .unavailable } }
extension CrossOriginRefused { public var kind: FailureKind { .notAllowed } }
extension ParameterRules.Invalid { var kind: FailureKind { .invalidParameters } }
extension ParameterRules.Missing { var kind: FailureKind { .invalidParameters } }
extension StreamExtra.Unknown { var kind: FailureKind { .invalidParameters } }
extension PhotoEffect.Unknown { var kind: FailureKind { .invalidParameters } }

extension CommentCommand.Failure {
    public var kind: FailureKind {
        switch self {
        case .noSuchPhoto: .notFound
        case .tooManyComments: .rateLimited
        case .empty, .tooLong, .invalidText, .invisibleText, .blank, .tooManyLines, .notUTF8: .other
        }
    }
}

extension PreviewCommand.Failure {
    public var kind: FailureKind {
        switch self {
        case .tooManyPreviews: .rateLimited
        case .busy: .unavailable
        case .noFile, .noEffect: .other
        }
    }
}

extension UncommentCommand.Failure {
    public var kind: FailureKind {
        switch self {
        case .noSuchComment: .notFound
        case .notAllowed: .notAllowed
        }
    }
}

extension VoteCommand.Failure {
    public var kind: FailureKind {
        switch self {
        case .noSuchPhoto: .notFound
        case .tooManyVotes: .rateLimited
        }
    }
}

extension DeleteCommand.Failure {
    public var kind: FailureKind {
        switch self {
        case .noSuchPhoto: .notFound
        case .notOwner: .notAllowed
        }
    }
}
