#if canImport(Glibc)
import Glibc
#endif

/// The loopback ports of the services a test process starts for itself,
/// 50 of them, chosen by its pid (a process left over from an earlier run
/// keeps its own). All below Linux's ephemeral range (32768-60999): there
/// an outgoing connection's local port can hold the port a server is about
/// to listen on, and a Galera node's start failed so ("Address already in use").
public enum TestPorts {
    private static let base = 12_000 + 50 * (Int(getpid()) % 400) // 12000-31999

    /// The shared Redis, and the next two for tests that stop their own.
    public static let redis = Int32(base)
    public static let s3 = Int32(base + 3)
    /// The replica pair's primary; its replica is the next one.
    public static let replicaPair = base + 4
    /// The Galera cluster's first port; it takes 33 (`scripts/galera.sh`: +0-2, +10-12, +20-22, +30-32).
    public static let galera = base + 10
}
