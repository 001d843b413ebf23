/// Where an S3-compatible bucket is and the key that signs for it
/// (`s3_url`), path-style: `http[s]://KEY:SECRET@HOST[:PORT]/BUCKET[?region=R]`,
/// the form MinIO, Ceph RGW, Garage and moto all answer.
public struct S3Settings: Sendable, Equatable {
    /// `http://HOST:PORT`, no trailing slash.
    public var endpoint: String
    public var bucket: String
    public var region = "us-east-1"
    public var accessKey: String
    public var secretKey: String
    /// For connecting and for each request.
    public var timeoutMillis = 5000
    /// The URL it was read from, as written ("" when made from its parts).
    public private(set) var url = ""

    public init(endpoint: String, bucket: String, accessKey: String, secretKey: String) {
        (self.endpoint, self.bucket, self.accessKey, self.secretKey) = (endpoint, bucket, accessKey, secretKey)
    }

    /// Key and secret are %-decoded (a secret may hold `/` or `+`).
    public init(url: String) throws(ConfigurationError) {
        let usage = "s3_url must be http[s]://KEY:SECRET@HOST[:PORT]/BUCKET[?region=REGION]"
        guard let schemeEnd = url.firstRange(of: "://"), ["http", "https"].contains(url[..<schemeEnd.lowerBound]) else {
            throw ConfigurationError("\(usage), not \(url)")
        }
        let scheme = url[..<schemeEnd.lowerBound]
        var rest = url[schemeEnd.upperBound...]
        var region = "us-east-1"
        if let question = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: question)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0] == "region", !parts[1].isEmpty else {
                    throw ConfigurationError("s3_url: unknown parameter \(pair) (only region=)")
                }
                region = String(parts[1])
            }
            rest = rest[..<question]
        }
        guard let at = rest.lastIndex(of: "@"), let slash = rest[at...].firstIndex(of: "/") else {
            throw ConfigurationError("\(usage) (the key, the secret and the bucket are needed)")
        }
        let credentials = rest[..<at].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let bucket = rest[rest.index(after: slash)...]
        let host = rest[rest.index(after: at)..<slash]
        guard credentials.count == 2, !credentials[0].isEmpty, !credentials[1].isEmpty, !host.isEmpty else {
            throw ConfigurationError("\(usage) (the key, the secret and the host are needed)")
        }
        guard Self.isBucketName(bucket) else {
            throw ConfigurationError("s3_url: \"\(bucket)\" is not a bucket name (3-63 of a-z 0-9 . -)")
        }
        let decode = { (text: Substring) in String(decoding: PHPStrings.urlDecode(Array(text.utf8)), as: UTF8.self) }
        self.init(endpoint: "\(scheme)://\(host)", bucket: String(bucket),
                  accessKey: decode(credentials[0]), secretKey: decode(credentials[1]))
        self.region = region
        self.url = url
    }

    static func isBucketName(_ name: Substring) -> Bool {
        (3...63).contains(name.count) && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D }
    }

    /// The bucket's address for messages (never the secret).
    public var place: String { "\(endpoint)/\(bucket)" }
}
