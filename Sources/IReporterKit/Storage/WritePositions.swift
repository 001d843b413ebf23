/// The replication position (a MariaDB GTID, `domain-server-sequence`) of
/// each user's last write, kept where every worker and host of the
/// installation reads it, so that a read from a replica waits for it
/// (`ReplicaReads`, docs/SCALING.md).
public protocol WritePositions: AnyObject {
    /// The position of the user's last remembered write, if any.
    func position(of userID: Int64) throws -> String?
    func remember(_ position: String, of userID: Int64) throws
}
