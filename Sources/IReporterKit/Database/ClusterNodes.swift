/// One node of a MariaDB Galera cluster (`db_nodes`).
public struct DatabaseNode: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt32

    public init(host: String, port: UInt32 = 3306) {
        (self.host, self.port) = (host, port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `host:port,host:port,…` (`[v6]:port` for IPv6; the port defaults
    /// to 3306); empty: none.
    public static func list(_ text: String) throws(ConfigurationError) -> [DatabaseNode] {
        var nodes: [DatabaseNode] = []
        for item in text.split(separator: ",") {
            let item = item.trimmingSpaces
            guard !item.isEmpty else { continue }
            var host = Substring(item), port: UInt32 = 3306
            if let colon = item.lastIndex(of: ":"), !item.hasPrefix("[") || item[..<colon].hasSuffix("]") {
                guard let number = UInt32(item[item.index(after: colon)...]), (1...65535).contains(number) else {
                    throw ConfigurationError("db_nodes: bad port in \(item)")
                }
                port = number
                host = item[..<colon]
            }
            if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty else { throw ConfigurationError("db_nodes: no host in \(item)") }
            nodes.append(DatabaseNode(host: String(host), port: port))
        }
        return nodes
    }
}

/// The order in which one connection tries a cluster's nodes. Connections
/// start at different nodes (`first`) so that a host's workers spread over
/// the cluster; a node found down or not Synced is tried last for
/// `avoidMillis`, then again as any other (a node that left is back once it
/// answers Synced).
struct ClusterNodes {
    static let avoidMillis: Int64 = 5000

    let nodes: [DatabaseNode]
    private let first: Int
    private var avoidedUntil: [Int64]

    init(_ nodes: [DatabaseNode], first: Int) {
        self.nodes = nodes
        self.first = nodes.isEmpty ? 0 : first % nodes.count
        avoidedUntil = Array(repeating: .min, count: nodes.count)
    }

    /// Every node's index, in the order to try them at `now` (monotonic
    /// milliseconds): the ones not avoided from `first` on, then the
    /// avoided ones, soonest back first (a cluster whose every node was
    /// seen failing is still tried whole).
    func order(now: Int64) -> [Int] {
        let rotated = nodes.indices.map { ($0 + first) % nodes.count }
        return rotated.filter { avoidedUntil[$0] <= now }
            + rotated.filter { avoidedUntil[$0] > now }.sorted { avoidedUntil[$0] < avoidedUntil[$1] }
    }

    mutating func avoid(_ index: Int, now: Int64) {
        avoidedUntil[index] = now + Self.avoidMillis
    }

    mutating func trust(_ index: Int) {
        avoidedUntil[index] = .min
    }
}
