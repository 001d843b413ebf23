#if canImport(Glibc)
import Glibc
#endif

/// What the throttles count a client address as: an IPv4 address on its
/// own, an IPv6 address by its /64 (what one subscriber gets: its 2^64
/// addresses are one client's to rotate through), an IPv4-mapped IPv6
/// address as the IPv4 address. Anything else (`unix:`, `-`) as it is.
struct ClientNetwork: CustomStringConvertible, Equatable {
    let description: String

    init(address: String) {
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET6, address, &ipv6) == 1 else {
            description = address
            return
        }
        let bytes = withUnsafeBytes(of: ipv6) { Array($0) }
        if bytes[..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            description = bytes[12...].map(String.init).joined(separator: ".")
        } else {
            let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            description = groups.joined(separator: ":") + "::/64"
        }
    }
}
