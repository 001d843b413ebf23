/// Where a store's plain reads go: the one connection, or `ReplicaReads`
/// (a replica when it has the reader's writes, else the primary).
public protocol DatabaseReading: AnyObject {
    func query(_ sql: String, _ parameters: [DatabaseValue]) throws(DatabaseError) -> [Row]
}

extension DatabaseConnection: DatabaseReading {}
