/// Where and how to connect.
public struct DatabaseSettings: Sendable, Equatable {
    public var host = "localhost"
    public var port: UInt32 = 3306
    public var socket: String?
    public var user = "ireport"
    /// None by default: the examples' old `ireport` is a well-known one
    /// (`--check-config` warns about it).
    public var password = ""
    public var database = "iReport"
    /// The original's columns are latin1 and PHP connected as latin1, so the
    /// bytes a client sends are stored and returned unchanged.
    public var charset = "latin1"
    /// A MariaDB client option file (`[client]` and `[ireporter]` groups,
    /// as `mariadb --defaults-file` reads them). Its values apply to what
    /// no `db_url` gave.
    public var optionFile: String?
    public var optionGroup = "ireporter"
    /// Whether a URL gave the settings, and which parts it named: with an
    /// option file, the file's values apply to the others.
    public var fromURL = false
    public var partsInURL: Set<URLPart> = []

    public enum URLPart: Sendable {
        case user, password, host, port, database
    }
    /// A MariaDB Galera cluster's nodes (`db_nodes`): each connection is
    /// made to one that is Synced in the primary component, with user,
    /// password and database as above. Empty: the one server above.
    public var nodes: [DatabaseNode] = []
    /// `wsrep_sync_wait` of each connection to a cluster node: 1 makes a
    /// read wait until the node has applied every write the cluster
    /// committed before it, so a phone sees its own upload whichever node
    /// its next request reaches (docs/SCALING.md has the measured cost).
    public var syncWait = 1
    public var connectTimeoutSeconds: UInt32 = 3
    public var readWriteTimeoutSeconds: UInt32 = 30

    public init() {}

    /// `mysql://USER:PASS@HOST:PORT/DB`, or `…@localhost/DB?socket=/path`.
    public init(url: String) throws(ConfigurationError) {
        self.init()
        fromURL = true
        guard url.hasPrefix("mysql://") || url.hasPrefix("mariadb://") else {
            throw ConfigurationError("db_url must start with mysql:// (got \(url))")
        }
        var rest = Substring(url[url.index(after: url.firstIndex(of: "/")!)...].dropFirst())
        if let question = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: question)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw ConfigurationError("db_url: bad query parameter \(pair)") }
                let value = String(decoding: PHPStrings.urlDecode(Array(parts[1].utf8)), as: UTF8.self)
                switch parts[0] {
                case "socket": socket = value
                case "charset": charset = value
                default: throw ConfigurationError("db_url: unknown parameter \(parts[0])")
                }
            }
            rest = rest[..<question]
        }
        if let slash = rest.firstIndex(of: "/") {
            let name = String(rest[rest.index(after: slash)...])
            if !name.isEmpty {
                database = name
                partsInURL.insert(.database)
            }
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            let decode = { (text: Substring) in String(decoding: PHPStrings.urlDecode(Array(text.utf8)), as: UTF8.self) }
            if let colon = credentials.firstIndex(of: ":") {
                user = decode(credentials[..<colon])
                password = decode(credentials[credentials.index(after: colon)...])
                partsInURL.formUnion([.user, .password])
            } else {
                user = decode(credentials)
                password = ""
                partsInURL.insert(.user)
            }
            rest = rest[rest.index(after: at)...]
        }
        if let colon = rest.lastIndex(of: ":"), !rest.hasPrefix("[") || rest[..<colon].hasSuffix("]") {
            guard let number = UInt32(rest[rest.index(after: colon)...]) else {
                throw ConfigurationError("db_url: bad port in \(url)")
            }
            port = number
            partsInURL.insert(.port)
            rest = rest[..<colon]
        }
        if !rest.isEmpty {
            host = String(rest)
            partsInURL.insert(.host)
        }
    }

    /// The settings as a `db_url` that `init(url:)` reads back (the charset
    /// has a key of its own, `db_charset`).
    var url: String {
        // Everything but letters, digits and -._~ as %XX, which init(url:) decodes.
        func escaped(_ text: String) -> String {
            let hex = Array("0123456789ABCDEF")
            return text.utf8.map { byte in
                let character = Character(Unicode.Scalar(byte))
                return byte < 0x80 && (character.isLetter || character.isNumber || "-._~".contains(character))
                    ? String(character) : "%\(hex[Int(byte >> 4)])\(hex[Int(byte & 15)])"
            }.joined()
        }
        return "mysql://\(escaped(user)):\(escaped(password))@\(host)" + (port == 3306 ? "" : ":\(port)")
            + "/\(database)" + (socket.map { "?socket=" + escaped($0) } ?? "")
    }
}
