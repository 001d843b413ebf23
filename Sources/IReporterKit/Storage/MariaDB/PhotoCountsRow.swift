/// The `photo_counts` row that every change to a photo's votes, comments or
/// existence locks first (making it if missing), so that changes to one
/// photo take turns: counts stay exact, and nothing lands on a photo while
/// it is being deleted. Lock order everywhere: this row, then `photos`,
/// then `votes` / `comments`.
enum PhotoCountsRow {
    /// What a rolled-back transaction found: no such photo.
    struct NoSuchPhoto: Error {}

    /// Locks the photo's counts row; its owner, or nil when there is no such
    /// photo (then the caller rolls back, which also drops the row made here).
    static func lock(_ database: DatabaseConnection, photoID: Int64) throws -> Int64? {
        guard isStorable(photoID) else { return nil }
        try database.execute("INSERT INTO photo_counts (IdPhoto) VALUES (?) ON DUPLICATE KEY UPDATE IdPhoto = IdPhoto",
                             [.int(photoID)])
        return try database.query("SELECT IdUser FROM photos WHERE IdPhoto = ? LOCK IN SHARE MODE", [.int(photoID)])
            .first?.int64("IdUser")
    }

    /// An id the int(11) columns can hold: any other names no row (and
    /// must not be stored, where a non-strict sql_mode would clamp it).
    static func isStorable(_ id: Int64) -> Bool { id > 0 && id <= Int64(Int32.max) }
}
