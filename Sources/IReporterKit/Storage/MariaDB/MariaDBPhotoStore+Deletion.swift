/// A photo's deletion with everything that hangs on it, and the repair of
/// one cut short.
extension MariaDBPhotoStore {
    private struct NotOwner: Error {}

    /// One transaction, after the photo's counts row is locked (so no vote
    /// or comment lands meanwhile). On the original MyISAM `photos` the row
    /// goes at once whatever happens next; what a failure then leaves in the
    /// InnoDB tables, `removeOrphanedReactions` (`ireporter repair`) clears.
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
    public func removeOrphanedReactions() throws -> Int {
        let ofAccounts = try removeReactionsOfDeletedAccounts()
        let keepsSetAside = try hasSetAsideTable()
        return try Self.photoSideTables.reduce(ofAccounts) { $0 + (try removeOrphans(from: $1, keepingSetAside: keepsSetAside)) }
    }

    /// Comments and votes whose account is gone, with their photos' counts
    /// counted again, notifications told by or to such an account, and its
    /// registration's day:
    /// what an account's deletion left before comments and votes needed the
    /// account's row (a request signed in before the deletion landed after it).
    private func removeReactionsOfDeletedAccounts() throws -> Int {
        var photos = Set<Int64>()
        var removed = 0
        for table in ["votes", "comments"] {
            let (ofPhotos, count) = try removeRowsOfDeletedAccounts(from: table)
            photos.formUnion(ofPhotos)
            removed += count
        }
        for id in photos.sorted() {
            // The counts row locked first, as a vote or comment locks it: none lands during the count.
            try database.retryingTransaction {
                guard try PhotoCountsRow.lock(database, photoID: id) != nil else { return }
                try database.execute("""
                    UPDATE photo_counts SET likes = (SELECT COUNT(*) FROM votes WHERE IdPhoto = ? AND vote = 1), \
                    dislikes = (SELECT COUNT(*) FROM votes WHERE IdPhoto = ? AND vote = -1), \
                    comments = (SELECT COUNT(*) FROM comments WHERE IdPhoto = ?) WHERE IdPhoto = ?
                    """, [.int(id), .int(id), .int(id), .int(id)])
            }
        }
        return removed + (try removeNotificationsOfDeletedAccounts()) + (try removeRegistrationsOfDeletedAccounts())
    }

    /// The photos the removed rows were on, and how many; nothing before migration 003 made the table.
    private func removeRowsOfDeletedAccounts(from table: String) throws(DatabaseError) -> (photos: [Int64], removed: Int) {
        let orphans = "FROM \(table) t LEFT JOIN login l ON (l.IdUser = t.IdUser) WHERE l.IdUser IS NULL"
        do {
            let photos = try database.query("SELECT DISTINCT t.IdPhoto \(orphans)").compactMap { $0.int64("IdPhoto") }
            return (photos, Int(try database.execute("DELETE t \(orphans)").affectedRows))
        } catch where error.code == .noSuchTable {
            return ([], 0)
        }
    }

    /// Nothing before migration 009 made the table.
    private func removeNotificationsOfDeletedAccounts() throws(DatabaseError) -> Int {
        do {
            return Int(try database.execute("""
                DELETE n FROM notifications n LEFT JOIN login a ON (a.IdUser = n.actor) LEFT JOIN login r ON (r.IdUser = n.recipient) \
                WHERE a.IdUser IS NULL OR r.IdUser IS NULL
                """).affectedRows)
        } catch where error.code == .noSuchTable {
            return 0
        }
    }

    /// When accounts deleted outside the API registered; nothing before migration 016 made the table.
    private func removeRegistrationsOfDeletedAccounts() throws(DatabaseError) -> Int {
        do {
            return Int(try database.execute(
                "DELETE r FROM login_registered r LEFT JOIN login l ON (l.IdUser = r.IdUser) WHERE l.IdUser IS NULL").affectedRows)
        } catch where error.code == .noSuchTable {
            return 0
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

    /// The rows of `table` whose photo is gone; 0 before migration 003 (005
    /// for `photo_words`, 006 for `photo_secrets`, 011 for `photo_descriptions`) made the table.
    private func removeOrphans(from table: String, keepingSetAside: Bool) throws(DatabaseError) -> Int {
        let (setAside, notSetAside) = keepingSetAside
            ? (" LEFT JOIN photos_removed r ON (r.IdPhoto = t.IdPhoto)", " AND r.IdPhoto IS NULL") : ("", "")
        do {
            return Int(try database.execute("""
                DELETE t FROM \(table) t LEFT JOIN photos p ON (p.IdPhoto = t.IdPhoto)\(setAside) \
                WHERE p.IdPhoto IS NULL\(notSetAside)
                """).affectedRows)
        } catch where error.code == .noSuchTable {
            return 0
        }
    }
}
