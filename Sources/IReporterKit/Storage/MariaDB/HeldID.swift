/// An id AUTO_INCREMENT handed out that rows of an earlier photo or
/// account still name: its own row deleted or lost outside the API (or a
/// photo's set aside by `repair`, its rows kept for a restore), and the
/// counter lowered since, as restoring a dump does. The new row must not
/// take them over (another's comments, likes or apps' tokens), so it takes
/// the next id.
struct HeldID: Error {
    /// `IdPhoto`, `IdUser`.
    let column: String
    let id: Int64
    /// The first table found naming it.
    let table: String

    /// Ids skipped at most per insert: a restore may leave many in a row,
    /// and each costs a few statements.
    static let skippedAtMost = 1000

    /// `insert` run again while the id it got is held (it throws `HeldID`
    /// after taking its row back), at most `skippedAtMost` times; the ids
    /// skipped said in one warning (`what`: the request, `how`: how such
    /// an id comes to be held).
    static func skipping<T>(_ what: String, _ how: String, _ insert: () throws -> T) throws -> T {
        var skipped: [HeldID] = []
        defer {
            if let first = skipped.first, let last = skipped.last {
                Log.warning("\(what): \(first.column) \(first.id)" + (skipped.count > 1 ? " to \(last.id) (\(skipped.count) ids)" : "")
                            + " handed out again, but \(first.table) still names an earlier \(first.id) (\(how)): skipped, "
                            + "their rows kept. Was the database restored, or its AUTO_INCREMENT lowered? "
                            + "docs/RELIABILITY.md, \"Restoring from backups\"")
            }
        }
        while true {
            do {
                return try insert()
            } catch let held as HeldID {
                skipped.append(held)
                guard skipped.count < skippedAtMost else {
                    throw DatabaseError(code: .duplicateKey, message: "\(skipped.count) \(held.column)s in a row held by earlier rows, "
                                        + "the last \(held.id) in \(held.table)")
                }
            }
        }
    }
}
