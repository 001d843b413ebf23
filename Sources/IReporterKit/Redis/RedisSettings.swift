/// Where Redis is and how to reach it (`redis_url`, `redis_timeout_ms`).
public struct RedisSettings: Sendable, Equatable {
    public enum Address: Sendable, Equatable {
        case tcp(host: String, port: Int32)
        case unix(path: String)
    }

    public var address: Address = .tcp(host: "127.0.0.1", port: 6379)
    /// `AUTH` after connecting: Redis's `requirepass`, or an ACL user's.
    public var user: String?
    public var password: String?
    /// `SELECT` after connecting.
    public var database = 0
    /// For connecting and for each command.
    public var timeoutMillis = 1000
    /// The URL it was read from, as written.
    public private(set) var url = ""

    public init() {}

    /// `redis://[[USER]:PASS@]HOST[:PORT][/DB]`, or
    /// `unix:///PATH[?db=DB&password=PASS]` (phpredis's `save_path` forms);
    /// user and password are %-decoded.
    public init(url: String) throws(ConfigurationError) {
        self.init()
        self.url = url
        let decode = { (text: Substring) in String(decoding: PHPStrings.urlDecode(Array(text.utf8)), as: UTF8.self) }
        if url.hasPrefix("unix://") {
            var rest = url.dropFirst("unix://".count)
            if let question = rest.firstIndex(of: "?") {
                for pair in rest[rest.index(after: question)...].split(separator: "&") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2 else { throw ConfigurationError("redis_url: bad query parameter \(pair)") }
                    switch parts[0] {
                    case "db": database = try Self.number(parts[1], url)
                    case "password", "auth": password = decode(parts[1])
                    default: throw ConfigurationError("redis_url: unknown parameter \(parts[0])")
                    }
                }
                rest = rest[..<question]
            }
            guard rest.hasPrefix("/") else { throw ConfigurationError("redis_url: unix:///PATH needs an absolute path, not \(url)") }
            address = .unix(path: String(rest))
            return
        }
        guard url.hasPrefix("redis://") else {
            throw ConfigurationError("redis_url must be redis://[:PASS@]HOST[:PORT][/DB] or unix:///PATH, not \(url)")
        }
        var rest = url.dropFirst("redis://".count)
        if let slash = rest.firstIndex(of: "/") {
            let name = rest[rest.index(after: slash)...]
            if !name.isEmpty { database = try Self.number(name, url) }
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            if let colon = credentials.firstIndex(of: ":") {
                let name = credentials[..<colon]
                user = name.isEmpty ? nil : decode(name)
                password = decode(credentials[credentials.index(after: colon)...])
            } else {
                password = decode(credentials)
            }
            rest = rest[rest.index(after: at)...]
        }
        var host = "127.0.0.1"
        var port: Int32 = 6379
        if let colon = rest.lastIndex(of: ":"), !rest.hasPrefix("[") || rest[..<colon].hasSuffix("]") {
            guard let number = Int32(rest[rest.index(after: colon)...]), (1...65535).contains(number) else {
                throw ConfigurationError("redis_url: bad port in \(url)")
            }
            port = number
            rest = rest[..<colon]
        }
        if rest.hasPrefix("[") && rest.hasSuffix("]") { rest = rest.dropFirst().dropLast() }
        if !rest.isEmpty { host = String(rest) }
        address = .tcp(host: host, port: port)
    }

    private static func number(_ text: Substring, _ url: String) throws(ConfigurationError) -> Int {
        guard let number = Int(text), (0...65535).contains(number) else {
            throw ConfigurationError("redis_url: bad database number in \(url)")
        }
        return number
    }

    /// The address for messages (never the password).
    public var place: String {
        switch address {
        case .tcp(let host, let port): "\(host):\(port)/\(database)"
        case .unix(let path): "\(path)?db=\(database)"
        }
    }
}
