/// A photo's deletion with everything that hangs on it, and the repair of
/// one cut short.
extension MariaDBPhotoStore {
    private struct NotOwner: Error {}

    /// One transaction, after the photo's counts row is locked (so no vote
    /// or comment lands meanwhile). On the original MyISAM `photos` the row
    /// goes at once whatever happens next; what a failure then leaves in the
    /// InnoDB tables, `orphanedReactions` (`ireporter repair --yes`) clears.
    public func deleteOwned(id: Int64, by userID: Int64) throws -> PhotoDeletion {
        do {
            try database.retryingTransaction {
                guard let owner = try PhotoCountsRow.lock(database, photoID: id) else { throw PhotoCountsRow.NoSuchPhoto() }
                guard owner == userID else { throw NotOwner() }
                for table in ["photos", "votes", "comments", "photo_details", "photo_counts"] {
                    try database.execute("DELETE FROM \(table) WHERE IdPhoto = ?", [.int(id)])
                }
                // Its secret (migration 006) and description (011; nothing before them).
                for table in ["photo_secrets", "photo_descriptions"] {
                    do {
                        try database.execute("DELETE FROM \(table) WHERE IdPhoto = ?", [.int(id)])
                    } catch let error as DatabaseError where error.code == .noSuchTable {}
                }
                // Its search words (migration 005; nothing before it).
                try searchIndex.remove(photoID: id)
            }
            return .deleted
        } catch is PhotoCountsRow.NoSuchPhoto {
            return .notFound
        } catch is NotOwner {
            return .notOwner
        }
    }

    /// The tables that hold something of a photo by its IdPhoto.
    private static let photoSideTables = ["votes", "comments", "photo_details", "photo_counts", "photo_words", "photo_secrets",
                                          "photo_descriptions"]

    /// Those of a row set aside into `photos_removed` stay: its restore
    /// (docs/RELIABILITY.md) brings the photo back whole, with its upload
    /// time, size, secret, likes, comments and description.
    /// First those of deleted accounts (their counts row may be made on the way), then those of deleted photos.
    public func orphanedReactions(remove: Bool) throws -> Int {
        let ofAccounts = try reactionsOfDeletedAccounts(remove: remove)
        let keepsSetAside = try hasSetAsideTable()
        return try Self.photoSideTables.reduce(ofAccounts) { total, table in
            let (setAside, notSetAside) = keepsSetAside
                ? (" LEFT JOIN photos_removed r ON (r.IdPhoto = t.IdPhoto)", " AND r.IdPhoto IS NULL") : ("", "")
            // A vote or comment whose account is gone too was counted with the account's (and removed first).
            let ofAccount = ["votes", "comments"].contains(table) ? " AND EXISTS (SELECT 1 FROM login l WHERE l.IdUser = t.IdUser)" : ""
            return total + (try orphans("FROM \(table) t LEFT JOIN photos p ON (p.IdPhoto = t.IdPhoto)\(setAside) "
                                        + "WHERE p.IdPhoto IS NULL\(notSetAside)\(ofAccount)", remove: remove))
        }
    }

    /// The rows `clause` (`FROM … t … WHERE …`) selects: how many, deleted
    /// when `remove`; 0 before the migration that made its table.
    private func orphans(_ clause: String, remove: Bool) throws(DatabaseError) -> Int {
        do {
            if remove { return Int(try database.execute("DELETE t \(clause)").affectedRows) }
            return Int(try database.query("SELECT COUNT(*) AS n \(clause)").first?.int64("n") ?? 0)
        } catch where error.code == .noSuchTable {
            return 0
        }
    }

    /// Comments and votes whose account is gone (their photos' counts
    /// counted again when they are removed), notifications told by or to
    /// such an account, and its registration's day:
    /// what an account's deletion left before comments and votes needed the
    /// account's row (a request signed in before the deletion landed after
    /// it), or an account's row deleted outside the API.
    private func reactionsOfDeletedAccounts(remove: Bool) throws -> Int {
        var found = 0
        for table in ["votes", "comments"] {
            let clause = "FROM \(table) t LEFT JOIN login l ON (l.IdUser = t.IdUser) WHERE l.IdUser IS NULL"
            let photos = remove ? try photosOf(clause) : []
            found += try orphans(clause, remove: remove)
            for id in photos { try countAgain(photoID: id) }
        }
        return found
            + (try orphans("FROM notifications t LEFT JOIN login a ON (a.IdUser = t.actor) LEFT JOIN login r ON (r.IdUser = t.recipient) "
                           + "WHERE a.IdUser IS NULL OR r.IdUser IS NULL", remove: remove))
            + (try orphans("FROM login_registered t LEFT JOIN login l ON (l.IdUser = t.IdUser) WHERE l.IdUser IS NULL", remove: remove))
    }

    /// The photos the rows `clause` (`… WHERE …`) selects are on, those still
    /// there (counting one gone would make it a counts row); none before
    /// migration 003 made the table.
    private func photosOf(_ clause: String) throws(DatabaseError) -> [Int64] {
        do {
            return try database.query("SELECT DISTINCT t.IdPhoto \(clause) AND EXISTS (SELECT 1 FROM photos p WHERE p.IdPhoto = t.IdPhoto)")
                .compactMap { $0.int64("IdPhoto") }
        } catch where error.code == .noSuchTable {
            return []
        }
    }

    /// The photo's likes, dislikes and comments counted again, its counts
    /// row locked first, as a vote or comment locks it: none lands during the count.
    private func countAgain(photoID id: Int64) throws {
        try database.retryingTransaction {
            guard try PhotoCountsRow.lock(database, photoID: id) != nil else { return }
            try database.execute("""
                UPDATE photo_counts SET likes = (SELECT COUNT(*) FROM votes WHERE IdPhoto = ? AND vote = 1), \
                dislikes = (SELECT COUNT(*) FROM votes WHERE IdPhoto = ? AND vote = -1), \
                comments = (SELECT COUNT(*) FROM comments WHERE IdPhoto = ?) WHERE IdPhoto = ?
                """, [.int(id), .int(id), .int(id), .int(id)])
        }
    }

    public func forgetSetAside(ofUser userID: Int64) throws {
        guard try hasSetAsideTable() else { return }
        for table in Self.photoSideTables { try forgetSetAside(ofUser: userID, in: table) }
        try database.execute("DELETE FROM photos_removed WHERE IdUser = ?", [.int(userID)])
    }

    /// What `table` holds of `userID`'s photos set aside; nothing before its migration made it.
    private func forgetSetAside(ofUser userID: Int64, in table: String) throws(DatabaseError) {
        do {
            try database.execute("DELETE t FROM \(table) t JOIN photos_removed r ON (r.IdPhoto = t.IdPhoto) WHERE r.IdUser = ?",
                                 [.int(userID)])
        } catch where error.code == .noSuchTable {}
    }

    private func hasSetAsideTable() throws(DatabaseError) -> Bool {
        try !database.query("""
            SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'photos_removed'
            """).isEmpty
    }
}
