/// Objects in one S3-compatible bucket, through libcurl with AWS Signature
/// V4 (payload hash signed too). Each call is one request, answered before
/// it returns: a `put` that returns is stored. Not shared between threads.
public final class S3Client {
    public let settings: S3Settings
    private let transfer = CurlTransfer()
    /// How a `/` in a listing's query is written (see `list`).
    private var slashInQuery = "%2F"

    public init(settings: S3Settings) { self.settings = settings }

    /// Stores `bytes` under `key`, replacing what was there.
    public func put(_ key: String, _ bytes: [UInt8], contentType: String = "image/jpeg") throws(S3Error) {
        _ = try send("PUT", key: key, body: bytes, headers: ["Content-Type: \(contentType)"])
    }

    /// The object's bytes; nil when there is none under `key`.
    public func get(_ key: String) throws(S3Error) -> [UInt8]? {
        let response = try send("GET", key: key, acceptingMissing: true)
        return response.status == 404 ? nil : response.body
    }

    /// The object's first `length` bytes (all of a shorter one); nil when
    /// there is none under `key`.
    public func prefix(_ key: String, length: Int) throws(S3Error) -> [UInt8]? {
        let response = try send("GET", key: key, headers: ["Range: bytes=0-\(length - 1)"], acceptingMissing: true)
        return response.status == 404 ? nil : Array(response.body.prefix(length))
    }

    public func exists(_ key: String) throws(S3Error) -> Bool {
        try send("HEAD", key: key, acceptingMissing: true).status != 404
    }

    /// Removes the object; removing one that is not there is no error (S3's own rule).
    public func delete(_ key: String) throws(S3Error) {
        _ = try send("DELETE", key: key, acceptingMissing: true)
    }

    /// An object of a listing.
    public struct Listed: Equatable, Sendable {
        public let key: String
        /// Its last write, seconds since 1970; nil when the store did not
        /// say, or not as a time of this era: the repair then never takes
        /// the object for an old one (it may be an upload not committed yet).
        public let modified: Int?
    }

    /// The objects whose keys start with `prefix`, in S3's order (bytewise),
    /// after `startAfter`, at most `limit` (S3 caps a page at 1,000).
    public func list(prefix: String, startAfter: String = "", limit: Int = 1000) throws(S3Error) -> [Listed] {
        try page(prefix: prefix, startAfter: startAfter, limit: limit).objects
    }

    /// Every object under `prefix`, a page at a time (each page continuing
    /// where the store said the last one stopped, until it says no more
    /// follow). A store that names the same place again would be listed
    /// forever: that is an error.
    public func forEachObject(prefix: String, pageSize: Int = 1000, _ body: (Listed) throws -> Void) throws {
        var continuation: String?
        repeat {
            let page = try page(prefix: prefix, continuation: continuation, limit: pageSize)
            for object in page.objects { try body(object) }
            if let next = page.continuation, next == continuation {
                throw S3Error(inconsistent: "the listing goes on from where it was already (continuation \(next))",
                              request: "GET \(settings.place)/?prefix=\(prefix)")
            }
            continuation = page.continuation
        } while continuation != nil
    }

    /// One ListObjectsV2 request.
    private func page(prefix: String, startAfter: String = "", continuation: String? = nil,
                      limit: Int = 1000) throws(S3Error) -> S3XML.ListPage {
        // The signature's canonical query is sorted by name, and libcurl signs it as written.
        func query(slash: String) -> String {
            var query = continuation.map { "continuation-token=\(URLEncoding.percentEncoded($0, slash: slash))&" } ?? ""
            query += "list-type=2&max-keys=\(min(max(limit, 1), 1000))&prefix=\(URLEncoding.percentEncoded(prefix, slash: slash))"
            if !startAfter.isEmpty { query += "&start-after=\(URLEncoding.percentEncoded(startAfter, slash: slash))" }
            return query
        }
        let response: CurlTransfer.Response
        do {
            response = try send("GET", key: "", query: query(slash: slashInQuery))
        } catch let error where error.code == .status(403, code: "SignatureDoesNotMatch") && slashInQuery == "%2F"
                                 && (prefix + startAfter + (continuation ?? "")).contains("/") {
            // AWS, MinIO and Ceph sign a `/` in a query value as %2F, as the
            // specification says; moto signs it as `/`. Once the first form
            // is refused, this client uses the other.
            slashInQuery = "/"
            response = try send("GET", key: "", query: query(slash: slashInQuery))
        }
        do throws(XMLError) {
            return try S3XML.listing(response.body)
        } catch {
            throw S3Error(error, request: "GET \(settings.place)/?prefix=\(prefix)")
        }
    }

    /// Makes the bucket; one that is already ours is fine.
    public func createBucket() throws(S3Error) {
        do {
            _ = try send("PUT", key: "", body: [])
        } catch let error where error.code == .status(409, code: "BucketAlreadyOwnedByYou") {
        }
    }

    /// A key the store, the tree and the web server all take as is: no
    /// leading slash, no `.`/`..` step, only `A-Z a-z 0-9 . _ - /`.
    public static func isValidKey(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.count <= 1024 && !key.hasPrefix("/")
            && key.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
            && key.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D || $0 == 0x2F }
    }

    private func send(_ method: String, key: String, query: String = "", body: [UInt8]? = nil, headers: [String] = [],
                      acceptingMissing: Bool = false) throws(S3Error) -> CurlTransfer.Response {
        let request = "\(method) \(settings.place)/\(key)"
        precondition(key.isEmpty || Self.isValidKey(key), "unchecked S3 key \(key)")
        let url = "\(settings.endpoint)/\(settings.bucket)/\(key)" + (query.isEmpty ? "" : "?\(query)")
        let signed = headers + ["x-amz-content-sha256: \(Digest.sha256.hexString(body ?? []))"]
        let response: CurlTransfer.Response
        do {
            response = try transfer.perform(method: method, url: url, headers: signed, body: body,
                                            awsSignature: "aws:amz:\(settings.region):s3",
                                            user: "\(settings.accessKey):\(settings.secretKey)",
                                            timeoutMillis: settings.timeoutMillis)
        } catch {
            Metrics.count(.s3TransferErrors)
            throw S3Error(error, request: request)
        }
        if (200..<300).contains(response.status) { return response }
        let error = S3Error(status: response.status, body: response.body, request: request)
        // A missing object, not a missing bucket (a HEAD's answer has no body to tell them apart).
        if acceptingMissing && (error.code == .status(404, code: "NoSuchKey") || (method == "HEAD" && response.status == 404)) {
            return response
        }
        Metrics.count(.s3StatusErrors)
        throw error
    }
}
