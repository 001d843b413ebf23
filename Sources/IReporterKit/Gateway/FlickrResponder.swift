/// The Flickr-compatible REST endpoint, `…/services/rest/` (under
/// `/iReporter/`, or at the root of a host of its own): the parameters of
/// the query string and the body go to `FlickrAPI`, whose answer is written
/// with its own content type (Flickr's REST is not the 2012 form API).
final class FlickrResponder {
    private let api: FlickrAPI
    /// `public_url` (ending in `/`); empty: the web server's name for the site.
    private let publicURL: String

    init(api: FlickrAPI, publicURL: String = "") { (self.api, self.publicURL) = (api, publicURL) }

    /// Whether the request's path is the REST endpoint.
    static func isRESTPath(_ request: GatewayRequest) -> Bool {
        let uri = request.param("REQUEST_URI") ?? ""
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return path.hasSuffix("/services/rest/") || path.hasSuffix("/services/rest")
    }

    /// Head and body of the answer to `form` (the POST body) and the query
    /// string, and for the access log the method and the outcome (`ok`, or
    /// `flickr-error-N` with Flickr's error code: docs/API.md).
    func answer(form: FormData, request: GatewayRequest) -> (bytes: [UInt8], method: String, outcome: String) {
        if request.param("REQUEST_METHOD") == "OPTIONS" {
            // A browser's preflight of a signed call (its Authorization header).
            return (Array(("Status: 204 No Content\r\n\(Self.crossOrigin)Access-Control-Allow-Methods: GET, POST\r\n"
                           + "Access-Control-Allow-Headers: Authorization, Content-Type\r\nAccess-Control-Max-Age: 86400\r\n\r\n").utf8),
                    "-", "ok")
        }
        var parameters = URLEncodedForm.parse(Array((request.param("QUERY_STRING") ?? "").utf8)).fields
        parameters.merge(form.fields) { _, body in body }
        let response = api.handle(parameters, oauthConsumerKey: Self.oauthConsumerKey(request.param("HTTP_AUTHORIZATION")),
                                  siteURL: Self.siteURL(request, publicURL: publicURL))
        let head = "Content-Type: \(response.contentType)\r\nContent-Length: \(response.body.count)\r\n"
            + "X-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n\(Self.crossOrigin)\r\n"
        let method = parameters["method"].map { AccessLog.field(String(decoding: $0.prefix(64), as: UTF8.self)) } ?? "-"
        let outcome = api.lastFailure.map { "flickr-error-\($0.code)" } ?? "ok"
        return (Array(head.utf8) + response.body, method, outcome)
    }

    /// Any web page may read the answers, as Flickr's own may be read
    /// (browser clients, flickr-sdk): they are public, and no cookie or
    /// session is ever read on this route.
    static let crossOrigin = "Access-Control-Allow-Origin: *\r\n"

    /// The installation's root (`…/iReporter/`) for the answers' absolute
    /// URLs (`SiteRoot`'s rules).
    static func siteURL(_ request: GatewayRequest, publicURL: String) -> String {
        SiteRoot.url(request, publicURL: publicURL) + "iReporter/"
    }

    /// `oauth_consumer_key` of an `Authorization: OAuth …` header.
    static func oauthConsumerKey(_ header: String?) -> String? {
        guard let header, header.hasPrefix("OAuth ") else { return nil }
        for part in header.dropFirst(6).split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: " \"") }
            if pair.count == 2, pair[0] == "oauth_consumer_key" { return pair[1] }
        }
        return nil
    }
}

private extension Substring {
    func trimmingCharacters(in characters: String) -> String {
        String(drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }
}
