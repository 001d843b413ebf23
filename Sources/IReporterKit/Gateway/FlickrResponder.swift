/// The Flickr-compatible REST endpoint, `…/services/rest/` (under
/// `/iReporter/`, or at the root of a host of its own): the parameters of
/// the query string and the body go to `FlickrAPI`, whose answer is written
/// with its own content type (Flickr's REST is not the 2012 form API).
final class FlickrResponder {
    private let api: FlickrAPI

    init(api: FlickrAPI) { self.api = api }

    /// Whether the request's path is the REST endpoint.
    static func isRESTPath(_ request: GatewayRequest) -> Bool {
        let uri = request.param("REQUEST_URI") ?? ""
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return path.hasSuffix("/services/rest/") || path.hasSuffix("/services/rest")
    }

    /// Head and body of the answer to `form` (the POST body) and the query string.
    func answer(form: FormData, request: GatewayRequest) -> [UInt8] {
        var parameters = URLEncodedForm.parse(Array((request.param("QUERY_STRING") ?? "").utf8)).fields
        parameters.merge(form.fields) { _, body in body }
        let response = api.handle(parameters, oauthConsumerKey: Self.oauthConsumerKey(request.param("HTTP_AUTHORIZATION")),
                                  siteURL: Self.siteURL(request))
        let head = "Content-Type: \(response.contentType)\r\nContent-Length: \(response.body.count)\r\n"
            + "X-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n\r\n"
        return Array(head.utf8) + response.body
    }

    /// The installation's root as the client reaches this host. (Debian's nginx
    /// sends `HTTP_HOST` as `$host`, without the port: the port is then
    /// `SERVER_PORT`'s.)
    static func siteURL(_ request: GatewayRequest) -> String {
        let secure = request.param("HTTPS").map { !$0.isEmpty && $0 != "off" } ?? false
        var host = (request.param("HTTP_HOST") ?? request.param("SERVER_NAME") ?? "localhost")
            .filter { $0.isLetter || $0.isNumber || ".-:[]".contains($0) }
        if !host.contains(":") || host.hasSuffix("]"), let port = request.param("SERVER_PORT"),
           port.allSatisfy(\.isNumber), port != (secure ? "443" : "80") {
            host += ":\(port)"
        }
        return "\(secure ? "https" : "http")://\(host)/iReporter/"
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
