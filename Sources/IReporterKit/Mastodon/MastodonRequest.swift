/// The HTTP methods the Mastodon-compatible API routes.
public enum HTTPMethod: String, Sendable {
    case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE"
}

/// One request to the Mastodon-compatible API, as its endpoints see it.
public struct MastodonRequest {
    public let method: HTTPMethod
    /// The path without the query string, as sent (`/api/v1/statuses/3`).
    public let path: String
    public let parameters: MastodonParameters
    /// `Authorization: Bearer …`, else an `access_token` parameter (what
    /// Doorkeeper, Mastodon's OAuth server, also accepts).
    public let bearerToken: [UInt8]?
    /// The client's address as the web server saw it (throttling).
    public let clientAddress: String
    /// The request came over HTTPS.
    public let isSecure: Bool
    /// A browser said it comes from another origin (`WebOrigin`): the
    /// authorization page's form refuses it, as the web client's commands do.
    public let isCrossOrigin: Bool
    /// The site's root URL, ending in `/` (`FlickrResponder.siteURL`'s rules:
    /// `public_url`, else the web server's name for the site, never `Host`).
    public let siteURL: String
    /// When it arrived (`CommandContext.arrived`); nil: when the API is given it.
    public var arrived: Instant?
    /// A request header by its CGI name (`HTTP_IDEMPOTENCY_KEY`).
    private let headerLookup: (String) -> String?

    public init(method: HTTPMethod, path: String, parameters: MastodonParameters = MastodonParameters(),
                authorization: String? = nil, clientAddress: String = "-", isSecure: Bool = false, isCrossOrigin: Bool = false,
                siteURL: String = "http://localhost/", arrived: Instant? = nil,
                headers: @escaping (String) -> String? = { _ in nil }) {
        self.method = method
        self.path = path
        self.parameters = parameters
        bearerToken = Self.bearer(authorization) ?? parameters.bytes("access_token")
        self.clientAddress = clientAddress
        self.isSecure = isSecure
        self.isCrossOrigin = isCrossOrigin
        self.siteURL = siteURL
        self.arrived = arrived
        headerLookup = headers
    }

    /// A request header, by its HTTP name (`Idempotency-Key`).
    public func header(_ name: String) -> String? {
        headerLookup("HTTP_" + name.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    /// The token of `Authorization: Bearer <token>` (the scheme in any case).
    static func bearer(_ authorization: String?) -> [UInt8]? {
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else { return nil }
        let token = authorization.dropFirst(7).drop { $0 == " " }
        return token.isEmpty ? nil : Array(token.utf8)
    }
}
