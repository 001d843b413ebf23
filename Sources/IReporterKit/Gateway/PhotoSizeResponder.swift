/// `GET …/photos/<server>/<IdPhoto>_<secret>[_<letter>].jpg` that the web
/// server handed over because the file is not there yet (nginx's
/// `try_files`, Apache's `ErrorDocument 404`, whose request keeps the
/// size's path in REQUEST_URI), or every such GET when the photos are in a
/// bucket (nginx caches the answers): the size made (`PhotoSizes`) and
/// answered as the web server answers it from then on, cacheable for a
/// year (its name changes whenever its content could). With a bucket, also
/// `GET …/upload/<IdPhoto>[-thumb].jpg`, the 2012 names, read from it.
final class PhotoSizeResponder {
    private let sizes: PhotoSizes
    private let bucket: S3PhotoFileStore?

    init(sizes: PhotoSizes, bucket: S3PhotoFileStore? = nil) {
        self.sizes = sizes
        self.bucket = bucket
    }

    /// A GET or HEAD whose path ends in `photos/<segment>/<segment>` (or,
    /// with a bucket, `upload/<segment>`), or is Flickr's form
    /// (`flickrPath`): answered here, a 404 when the name is not one of ours. (A POST there stays the API's, as every
    /// path under /iReporter/ was PHP's.) Doubled slashes count as one, as
    /// nginx and Apache merge them when they pick the location that hands
    /// the request over: `photos//000000/…` is a size's path misspelled (a
    /// 404), not a command.
    func handles(_ request: GatewayRequest) -> Bool {
        guard let method = request.param("REQUEST_METHOD"), method == "GET" || method == "HEAD" else { return false }
        // DOCUMENT_URI: a size nginx was sent to by the Flickr form's answer keeps that form as its REQUEST_URI.
        let paths = [Self.path(request)] + (request.param("DOCUMENT_URI").map { [Substring($0)] } ?? [])
        return paths.contains { path in
            let segments = path.split(separator: "/")
            return (segments.count >= 3 && segments[segments.count - 3] == PhotoTree.folderName)
                || (bucket != nil && segments.count >= 2 && segments[segments.count - 2] == "upload")
        } || Self.flickrPath(request) != nil
    }

    /// `/<number>/<name>.jpg` at a host's root, where Flickr's clients build
    /// a photo's URL (deploy/nginx/flickr-host.conf), as nginx decoded it
    /// (`DOCUMENT_URI`: `/%30/…` is `/0/…` to its location too).
    private static func flickrPath(_ request: GatewayRequest) -> Substring? {
        let path = request.param("DOCUMENT_URI").map { Substring($0) } ?? Self.path(request)
        let segments = path.split(separator: "/")
        guard segments.count == 2, segments[0].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), segments[1].hasSuffix(".jpg") else {
            return nil
        }
        return path
    }

    /// Head and body of the answer.
    func answer(_ request: GatewayRequest) -> [UInt8] {
        let path = Self.path(request)
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if let bucket, segments.count >= 2, segments[segments.count - 2] == "upload" {
            return legacyAnswer(bucket, name: segments[segments.count - 1], request)
        }
        // A size nginx was sent to by the Flickr form's answer below keeps
        // that form as its REQUEST_URI; its DOCUMENT_URI is the size's path.
        let sizePath = PhotoTree.parse(urlPath: path) ?? request.param("DOCUMENT_URI").flatMap { PhotoTree.parse(urlPath: Substring($0)) }
        if sizePath == nil, let flickr = Self.flickrPath(request) {
            guard let wanted = PhotoTree.parse(flickrPath: flickr) else { return Self.notFound }
            // nginx serves the size's own path (the file, or this route to make it): nothing read here.
            return Array(("Status: 200 OK\r\nX-Accel-Redirect: /iReporter/"
                          + PhotoTree.urlPath(id: wanted.id, secret: wanted.secret, size: wanted.size) + "\r\n\r\n").utf8)
        }
        guard let wanted = sizePath else { return Self.notFound }
        let immutable = "public, max-age=31536000, immutable"
        if request.param("REQUEST_METHOD") == "HEAD",
           let length = sizes.storedLength(wanted.size, id: wanted.id, secret: wanted.secret) {
            return Self.imageHead(length: length, cacheControl: immutable)
        }
        switch sizes.size(wanted.size, id: wanted.id, secret: wanted.secret) {
        case .found(let jpeg):
            return Self.image(jpeg, request, cacheControl: immutable)
        case .notFound:
            return Self.notFound
        case .failed:
            return Self.json(status: "500 Internal Server Error", "The service is temporarily unavailable, please try again")
        }
    }

    /// A 2012 name from the bucket: no secret in it, so it may be deleted
    /// under the same URL, and is not kept long by anyone.
    private func legacyAnswer(_ bucket: S3PhotoFileStore, name: Substring, _ request: GatewayRequest) -> [UInt8] {
        do {
            guard let jpeg = try bucket.legacyObject(named: name) else { return Self.notFound }
            return Self.image(jpeg, request, cacheControl: "public, max-age=60")
        } catch {
            Log.error("upload/\(name): \(error)")
            return Self.json(status: "503 Service Unavailable", "The service is temporarily unavailable, please try again")
        }
    }

    private static func image(_ jpeg: [UInt8], _ request: GatewayRequest, cacheControl: String) -> [UInt8] {
        imageHead(length: jpeg.count, cacheControl: cacheControl) + (request.param("REQUEST_METHOD") == "HEAD" ? [] : jpeg)
    }

    private static func imageHead(length: Int, cacheControl: String) -> [UInt8] {
        // Status said: Apache hands a miss over as its 404's ErrorDocument, and keeps the 404 otherwise.
        Array(("Status: 200 OK\r\nContent-Type: image/jpeg\r\nContent-Length: \(length)\r\n"
               + "Cache-Control: \(cacheControl)\r\n"
               + photoHeaders.map { "\($0.name): \($0.value)\r\n" }.joined() + "\r\n").utf8)
    }

    /// What every answer that is a photo carries, whoever serves it: this
    /// route (a size's first answer) or the web server from disk (the
    /// shipped configurations' photo locations declare the same, checked by
    /// `PhotoSizeResponderTests`). A photo is only ever a picture: never
    /// sniffed as something else, never a document that runs script (HTML
    /// survives inside ICC, Adobe, JFIF segments).
    static let photoHeaders: [(name: String, value: String)] = [
        ("X-Content-Type-Options", "nosniff"),
        ("Content-Security-Policy", "default-src 'none'; sandbox"),
    ]

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
