#if canImport(Glibc)
import Glibc
#endif

/// `listen_allowed_clients` (php-fpm's `listen.allowed_clients`): the peer
/// addresses a TCP listening socket serves. Empty: every peer. Unix-socket
/// peers are always served (the socket file's mode guards them).
public struct ClientAllowList: Sendable, Equatable, CustomStringConvertible {
    /// Each address as its 16 bytes of IPv6 (IPv4 as `::ffff:a.b.c.d`).
    private var addresses: [[UInt8]] = []
    public private(set) var description = ""

    public init() {}

    /// Comma-separated IPv4 and IPv6 addresses.
    init(_ text: String, key: String) throws(ConfigurationError) {
        for item in text.split(separator: ",").map({ $0.trimmingSpaces }) where !item.isEmpty {
            guard let bytes = Self.parse(item) else {
                throw ConfigurationError("\(key): \"\(item)\" is not an IPv4 or IPv6 address")
            }
            addresses.append(bytes)
        }
        description = text.split(separator: ",").map { $0.trimmingSpaces }.filter { !$0.isEmpty }.joined(separator: ",")
    }

    public var isEmpty: Bool { addresses.isEmpty }

    /// Nil when the peer of this connected socket may be served, else its
    /// address as text (for the operator's warning).
    func refusedPeer(connection fd: Int32) -> String? {
        guard !addresses.isEmpty else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard found == 0 else { return "an unknown peer" }
        switch Int32(storage.ss_family) {
        case AF_UNIX: return nil
        case AF_INET:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }.sin_addr
            let bytes = withUnsafeBytes(of: address) { Array($0) }
            return addresses.contains(Self.mapped(bytes)) ? nil : Self.text(AF_INET, bytes)
        case AF_INET6:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }.sin6_addr
            let bytes = withUnsafeBytes(of: address) { Array($0) }
            return addresses.contains(bytes) ? nil : Self.text(AF_INET6, bytes)
        default: return "a peer of address family \(storage.ss_family)"
        }
    }

    /// `bytes`: an `in_addr` or `in6_addr` as the socket gave it.
    private static func text(_ family: Int32, _ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return "an unknown peer" }
        return String(cBuffer: buffer)
    }

    private static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return mapped(withUnsafeBytes(of: v4) { Array($0) }) }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: v6) { Array($0) } }
        return nil
    }

    /// An IPv4 address as the IPv6 one a dual-stack socket reports for it.
    private static func mapped(_ v4: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + v4 }
}
