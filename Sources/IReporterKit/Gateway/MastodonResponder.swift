/// The Mastodon-compatible API's door (`/api/v1/…`, `/api/v2/…`,
/// `/oauth/…`, `/.well-known/…`, `/nodeinfo/…` at the host's root): the
/// gateway's request as a `MastodonRequest`, and the answer's head with its
/// status, CORS and cache headers.
final class MastodonResponder {
    let api: MastodonAPI
    /// `public_url` (ending in `/`); empty: the web server's name for the site.
    private let publicURL: String

    init(api: MastodonAPI, publicURL: String = "") { (self.api, self.publicURL) = (api, publicURL) }

    static let pathPrefixes = ["/api/v1/", "/api/v2/", "/oauth/", "/.well-known/", "/nodeinfo/"]

    /// Whether the request's path is one of the API's.
    static func handles(_ request: GatewayRequest) -> Bool {
        let path = self.path(request)
        return pathPrefixes.contains { path.hasPrefix($0) }
    }

    static func path(_ request: GatewayRequest) -> Substring {
        let uri = request.param("REQUEST_URI") ?? ""
        return uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    /// The request's method as the API routes it (HEAD as GET, whose body
    /// the web server leaves out, as Rails does); nil for OPTIONS (CORS's
    /// preflight, answered here) and methods it has no use for.
    static func method(_ request: GatewayRequest) -> HTTPMethod? {
        let name = request.param("REQUEST_METHOD") ?? ""
        return HTTPMethod(rawValue: name == "HEAD" ? "GET" : name)
    }

    /// The answer to a request whose body is read (`parameters`).
    func answer(_ request: GatewayRequest, method: HTTPMethod, parameters: MastodonParameters,
                clientAddress: String, isSecure: Bool) -> MastodonAnswer {
        let siteURL = SiteRoot.url(request, publicURL: publicURL)
        return api.answer(MastodonRequest(method: method, path: String(Self.path(request)), parameters: parameters,
                                          authorization: request.param("HTTP_AUTHORIZATION"), clientAddress: clientAddress,
                                          isSecure: isSecure, isCrossOrigin: WebOrigin.isCrossOrigin(request), siteURL: siteURL,
                                          arrived: RequestArrival.instant(of: request, clock: api.services.clock,
                                                                          wallClock: api.services.wallClock),
                                          headers: { request.param($0) }))
    }

    /// CORS's preflight: browser clients (Elk, Phanpy) call the API from
    /// their own sites with a token, never a cookie.
    func preflight(_ request: GatewayRequest) -> MastodonAnswer {
        guard api.knows(path: String(Self.path(request))) else { return MastodonError.notFound.answer }
        return MastodonAnswer(status: 204, headers: [
            ("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE"),
            ("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key"),
            ("Access-Control-Max-Age", "86400"),
        ], body: [])
    }

    /// Status, content type and length, the answer's headers; every origin
    /// may read the API (it answers tokens, not cookies) but for the
    /// authorization page, which is the server's own. Nothing is kept by a
    /// cache but what an answer says itself (a waiting media's file).
    func head(_ answer: MastodonAnswer, path: Substring) -> [UInt8] {
        var head = "Status: \(answer.status) \(MastodonAnswer.reason(answer.status))\r\n"
        head += "Content-Type: \(answer.contentType)\r\nContent-Length: \(answer.body.count)\r\n"
        for (name, value) in answer.headers { head += "\(name): \(value)\r\n" }
        // By segments, as the router matches them: `/oauth//authorize` is the page too.
        if !MastodonRouter.segments(of: String(path)).starts(with: ["oauth", "authorize"]) {
            head += "Access-Control-Allow-Origin: *\r\n"
            head += "Access-Control-Expose-Headers: Link, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset\r\n"
        }
        if !answer.headers.contains(where: { $0.name == "Cache-Control" }) { head += "Cache-Control: no-store\r\n" }
        head += "X-Content-Type-Options: nosniff\r\n\r\n"
        return Array(head.utf8)
    }
}
