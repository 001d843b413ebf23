/// The `login` row of the account a transaction adds something for (a
/// photo, a comment, a vote), read with a shared lock after the addition: an
/// account's deletion that removes the row later finds the addition in its
/// second pass (`AccountRemoval`; InnoDB's lock makes it wait for the
/// COMMIT), and one that removed it before is seen here.
enum AccountRow {
    /// Throws `PhotoStoreError.accountRemoved` when the account is gone: the transaction rolls back.
    static func lock(_ database: DatabaseConnection, userID: Int64) throws {
        guard try !database.query("SELECT 1 FROM login WHERE IdUser = ? LOCK IN SHARE MODE", [.int(userID)]).isEmpty else {
            throw PhotoStoreError.accountRemoved
        }
    }
}
