/// An error of the OAuth endpoints as RFC 6749 §5.2 names them, with
/// Doorkeeper's descriptions (what Mastodon answers): `{"error": code,
/// "error_description": description}`, 401 for a client that failed to
/// authenticate, else 400.
public struct OAuthError: Error, Equatable, Sendable {
    public enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        case invalidGrant = "invalid_grant"
        case unauthorizedClient = "unauthorized_client"
        case unsupportedGrantType = "unsupported_grant_type"
        case invalidScope = "invalid_scope"
        case unsupportedResponseType = "unsupported_response_type"
        case accessDenied = "access_denied"
    }

    public let code: Code
    public let description: String

    public init(_ code: Code, _ description: String? = nil) {
        self.code = code
        self.description = description ?? Self.standardDescription(code)
    }

    public var status: Int { code == .invalidClient ? 401 : 400 }

    static func standardDescription(_ code: Code) -> String {
        switch code {
        case .invalidRequest:
            "The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed."
        case .invalidClient:
            "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method."
        case .invalidGrant:
            "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the "
                + "authorization request, or was issued to another client."
        case .unauthorizedClient: "The client is not authorized to perform this request using this method."
        case .unsupportedGrantType: "The authorization grant type is not supported by the authorization server."
        case .invalidScope: "The requested scope is invalid, unknown, or malformed."
        case .unsupportedResponseType: "The authorization server does not support this response type."
        case .accessDenied: "The resource owner or authorization server denied the request."
        }
    }

    static func missing(_ parameter: String) -> OAuthError {
        OAuthError(.invalidRequest, "Missing required parameter: \(parameter).")
    }
}
