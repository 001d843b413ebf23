/// `GET …/photos/<server>/<IdPhoto>_<secret>[_<letter>].jpg` that the web
/// server handed over because the file is not there yet (nginx's
/// `try_files`, Apache's `ErrorDocument 404`, whose request keeps the
/// size's path in REQUEST_URI): the size made (`PhotoSizes`)
/// and answered as the web server answers it from then on, cacheable for a
/// year (its name changes whenever its content could).
final class PhotoSizeResponder {
    private let sizes: PhotoSizes

    init(sizes: PhotoSizes) { self.sizes = sizes }

    /// A GET or HEAD whose path ends in `photos/<segment>/<segment>`: the
    /// size route answers it, a 404 when the name is not one of ours. (A
    /// POST there stays the API's, as every path under /iReporter/ was PHP's.)
    static func isSizeRequest(_ request: GatewayRequest) -> Bool {
        guard let method = request.param("REQUEST_METHOD"), method == "GET" || method == "HEAD" else { return false }
        let segments = path(request).split(separator: "/", omittingEmptySubsequences: false)
        return segments.count >= 3 && segments[segments.count - 3] == PhotoTree.folderName
    }

    /// Head and body of the answer.
    func answer(_ request: GatewayRequest) -> [UInt8] {
        guard let wanted = PhotoTree.parse(urlPath: Self.path(request)) else { return Self.notFound }
        switch sizes.size(wanted.size, id: wanted.id, secret: wanted.secret) {
        case .found(let jpeg):
            // Status said: Apache hands a miss over as its 404's ErrorDocument, and keeps the 404 otherwise.
            let head = "Status: 200 OK\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n"
                + "Cache-Control: public, max-age=31536000, immutable\r\n"
                + "X-Content-Type-Options: nosniff\r\n\r\n"
            return Array(head.utf8) + (request.param("REQUEST_METHOD") == "HEAD" ? [] : jpeg)
        case .notFound:
            return Self.notFound
        case .failed:
            return Self.json(status: "500 Internal Server Error", "The service is temporarily unavailable, please try again")
        }
    }

    private static let notFound = json(status: "404 Not Found", "No such photo size")

    private static func json(status: String, _ message: String) -> [UInt8] {
        let body = "{\"error\":\"\(message)\"}"
        return Array(("Status: \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                      + "Cache-Control: no-store\r\n\r\n" + body).utf8)
    }

    /// The request's path as sent (REQUEST_URI, undecoded, without its query).
    private static func path(_ request: GatewayRequest) -> Substring {
        let uri = request.param("REQUEST_URI") ?? ""
        return uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }
}
