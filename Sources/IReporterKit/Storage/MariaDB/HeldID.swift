/// An id AUTO_INCREMENT handed out that rows of an earlier photo or
/// account still name: its own row deleted or lost outside the API (or set
/// aside by `repair`, its rows kept for a restore), and the counter lowered
/// since, as restoring a dump does. The new row must not take them over
/// (another's comments, likes or apps' tokens), so it takes the next id.
struct HeldID: Error {
    /// `IdPhoto`, `IdUser`.
    let column: String
    let id: Int64
    /// The first table found naming it.
    let table: String

    /// Ids skipped so at most per insert, each said in the log.
    static let skippedAtMost = 20

    /// `insert` run again while the id it got is held (it throws `HeldID`
    /// after taking its row back), at most `skippedAtMost` times.
    static func skipping<T>(_ what: String, _ insert: () throws -> T) throws -> T {
        var skipped = 0
        while true {
            do {
                return try insert()
            } catch let held as HeldID {
                skipped += 1
                guard skipped < skippedAtMost else {
                    throw DatabaseError(code: .duplicateKey, message: "\(skipped) \(held.column)s in a row held by earlier rows, "
                                        + "the last \(held.id) in \(held.table)")
                }
                Log.warning("\(what): \(held.column) \(held.id) was handed out again, but \(held.table) still names an earlier "
                            + "\(held.id) (its row deleted outside the API, or set aside): that id is skipped, its rows kept. "
                            + "Was the database restored, or its AUTO_INCREMENT lowered? docs/RELIABILITY.md, \"Restoring from backups\"")
            }
        }
    }
}
