/// The original `login` table: `IdUser`, `username`, `pass` (latin1,
/// compared with the column's collation, so case and trailing spaces are
/// ignored exactly as they were for the PHP version).
public final class MariaDBUserStore: UserStore {
    /// `pass` must hold a PHC string (about 100 characters) before hashing starts.
    public static let hashColumnLength = 255

    let database: DatabaseConnection
    /// Whether `login.pass` is wide enough for a hash, checked now and then
    /// (the migration may run while we serve).
    private var passwordColumn: (fitsHashes: Bool, checkedAt: Int64)?
    private var uniqueIndex: (present: Bool, checkedAt: Int64)?

    public init(database: DatabaseConnection) { self.database = database }

    public func storesPasswordHashes() throws -> Bool {
        let now = database.clock.now.millis
        if let passwordColumn, now - passwordColumn.checkedAt < 60_000 { return passwordColumn.fitsHashes }
        let fits = try passwordColumnLength() >= Self.hashColumnLength
        if !fits && passwordColumn == nil {
            Log.warning("login.pass is too narrow for password hashes: passwords stay stored as the app sends them "
                        + "until sql/migrations/001 is applied (`ireporter migrate` or `migrate-passwords`; see README, \"Password storage\")")
        }
        passwordColumn = (fits, now)
        return fits
    }

    /// The accounts with this name, in table order as the original's
    /// `LIMIT 1` saw them: the name is compared by the column's collation,
    /// the password by the caller, never in SQL. (No ORDER BY: without the
    /// index of sql/migrations/002 it would add a sort to the table scan.)
    public func accounts(named username: [UInt8]) throws -> [UserRecord] {
        try database.query("SELECT IdUser, username, pass FROM login WHERE username = ? LIMIT 16", [.bytes(username)])
            .compactMap { row in
                guard let id = row.int64("IdUser") else { return nil }
                return UserRecord(id: id, username: row["username"] ?? [], password: row["pass"] ?? [])
            }
    }

    public func account(id: Int64) throws -> UserRecord? {
        try database.query("SELECT IdUser, username, pass FROM login WHERE IdUser = ?", [.int(id)]).first.map { row in
            UserRecord(id: id, username: row["username"] ?? [], password: row["pass"] ?? [])
        }
    }

    /// Its registration's day too (nothing before migration 016).
    public func removeAccount(id: Int64) throws {
        _ = try database.ifTableExists("login_registered") {
            try database.execute("DELETE FROM login_registered WHERE IdUser = ?", [.int(id)])
        }
        try database.execute("DELETE FROM login WHERE IdUser = ?", [.int(id)])
    }

    /// The name's weight string in the column's collation (latin1_swedish_ci,
    /// as both schemas declare `username`), without trailing spaces (the
    /// collation pads): equal exactly when `username = ?` finds the same
    /// accounts, so `c\xC3r\xD5l`, `CAROL ` and `carol` have one key. The
    /// parameter is converted to latin1 first, as the comparison converts it.
    public func accountKey(for username: [UInt8]) throws -> [UInt8] {
        let rows = try database.query(
            "SELECT WEIGHT_STRING(RTRIM(CONVERT(? USING latin1)) COLLATE latin1_swedish_ci) AS accountKey", [.bytes(username)])
        return rows.first?["accountKey"] ?? []
    }

    /// Every name (the `username` index of sql/migrations/002 makes it a
    /// scan of the index only).
    public func usernames() throws -> [[UInt8]] {
        try database.query("SELECT username FROM login").compactMap { $0["username"] }
    }

    /// Once migration 007 made `username` unique, the index refuses a
    /// second account of one name (on every node of a Galera cluster,
    /// which replicates no GET_LOCK); before it, a named lock serialises
    /// registrations across workers and servers of one database.
    public func register(username: [UInt8], password: [UInt8]) throws -> RegistrationOutcome {
        if try hasUniqueUsernames() { return try insert(username: username, password: password) }
        let granted = try database.query("SELECT GET_LOCK('iReporter.register', 10) AS granted")
        guard granted.first?["granted"] == Array("1".utf8) else {
            throw DatabaseError(code: .notGranted, message: "registration lock not granted")
        }
        defer { _ = try? database.query("SELECT RELEASE_LOCK('iReporter.register')") }
        return try insert(username: username, password: password)
    }

    /// The look-up and the INSERT in one transaction, run again when a
    /// Galera node certified the same name first (error 1213): the next run
    /// reads that account and answers "taken", as one host would. Whether
    /// earlier rows still name the new id is asked once the account is
    /// committed, and a held id's account taken back (`HeldID`): inside, a
    /// dozen more reads between the INSERT and the COMMIT let two Galera
    /// nodes each commit one name (test_galera), where the short
    /// transaction had one of them refused.
    private func insert(username: [UInt8], password: [UInt8]) throws -> RegistrationOutcome {
        try HeldID.skipping("register", "its login row deleted outside the API") {
            let outcome = try database.retryingTransaction { try checkedInsert(username: username, password: password) }
            if case .created(let account) = outcome, let table = try tableNaming(account: account.id) {
                try removeAccount(id: account.id)
                throw HeldID(column: "IdUser", id: account.id, table: table)
            }
            return outcome
        }
    }

    /// What names an account by its id, in the tables of the migrations (a
    /// table not made yet names none): a new account given an id one still
    /// names would take over another's photos, comments, likes, follows,
    /// notifications, apps' tokens and codes, media or read markers. (The
    /// notifications an account caused come with its votes, follows and
    /// comments; `actor` has no index to look it up by.)
    private static let accountColumns = [("photos", "IdUser"), ("comments", "IdUser"), ("votes", "IdUser"), ("follows", "follower"),
                                         ("follows", "followee"), ("notifications", "recipient"), ("oauth_tokens", "IdUser"),
                                         ("oauth_codes", "IdUser"), ("media_attachments", "IdUser"), ("read_markers", "IdUser"),
                                         ("status_idempotency", "IdUser"), ("photos_removed", "IdUser")]

    /// The first table that still names `id`; nil when none does.
    private func tableNaming(account id: Int64) throws -> String? {
        for (table, column) in Self.accountColumns {
            let names = try database.ifTableExists(table) {
                try !database.query("SELECT 1 FROM \(table) WHERE \(column) = ? LIMIT 1", [.int(id)]).isEmpty
            }
            if names == true { return table }
        }
        return nil
    }

    private func checkedInsert(username: [UInt8], password: [UInt8]) throws -> RegistrationOutcome {
        // Asked first, as before the index: a taken name is "taken" even
        // when the password would not fit either.
        if !(try database.query("SELECT username FROM login WHERE username = ? LIMIT 1", [.bytes(username)])).isEmpty {
            return .nameTaken
        }
        guard let insert = try insertUnlessTaken(username: username, password: password) else {
            return .nameTaken // registered meanwhile, through another worker, host or node
        }
        guard insert.affectedRows == 1 else {
            passwordColumn = nil // narrowed since we looked: look again
            return .passwordDoesNotFit
        }
        // In the same transaction: the account and its day (migration 016), or neither.
        _ = try database.ifTableExists("login_registered") {
            // A row left by an account deleted behind the server's back (its id given again after a restore) is replaced.
            try database.execute("INSERT INTO login_registered (IdUser, registered) VALUES (?, UNIX_TIMESTAMP()) "
                                 + "ON DUPLICATE KEY UPDATE registered = VALUES(registered)", [.int(Int64(insert.insertID))])
        }
        return .created(UserRecord(id: Int64(insert.insertID), username: username, password: password))
    }

    /// The INSERT's outcome; nil when the unique index refused the name.
    private func insertUnlessTaken(username: [UInt8], password: [UInt8]) throws(DatabaseError)
        -> (affectedRows: UInt64, insertID: UInt64)? {
        do {
            return try database.execute("INSERT INTO login (username, pass) SELECT ?, ? FROM DUAL WHERE \(Self.fitsPassColumn)",
                                        [.bytes(username), .bytes(password), .bytes(password)])
        } catch where error.code == .duplicateKey {
            return nil
        }
    }

    /// Whether migration 007's unique index exists, asked again now and then
    /// (the migration may run while we serve).
    private func hasUniqueUsernames() throws(DatabaseError) -> Bool {
        let now = database.clock.now.millis
        if let uniqueIndex, now - uniqueIndex.checkedAt < 60_000 { return uniqueIndex.present }
        let present = !(try database.query(Self.uniqueUsernameQuery)).isEmpty
        uniqueIndex = (present, now)
        return present
    }

    /// Answers a row once `login.username` has migration 007's unique index.
    static let uniqueUsernameQuery = """
        SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'login' \
        AND INDEX_NAME = 'username_unique'
        """

    /// Replaces a stored password, unless it changed meanwhile or the new
    /// value is longer than `pass` is now; true when it was replaced.
    @discardableResult
    public func replacePassword(userID: Int64, old: [UInt8], new: [UInt8]) throws -> Bool {
        let replaced = try database.execute(
            "UPDATE login SET pass = ? WHERE IdUser = ? AND pass = BINARY ? AND \(Self.fitsPassColumn)",
            [.bytes(new), .int(userID), .bytes(old), .bytes(new)]).affectedRows == 1
        if !replaced { passwordColumn = nil } // narrowed meanwhile, or changed by another login: look again
        return replaced
    }

    /// A `pass` value longer than the column would be cut silently (the
    /// original's empty sql_mode), and a cut hash locks its account out. The
    /// width is checked in the same statement, because the column may have
    /// been narrowed (migration undone) since this server last looked.
    private static let fitsPassColumn = "CHAR_LENGTH(?) <= (\(passColumnLengthQuery))"

    private static let passColumnLengthQuery = """
        SELECT CHARACTER_MAXIMUM_LENGTH FROM information_schema.COLUMNS \
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'login' AND COLUMN_NAME = 'pass'
        """

    // MARK: - for `ireporter migrate-passwords`

    /// The declared length of `login.pass` (45 in the original schema).
    public func passwordColumnLength() throws(DatabaseError) -> Int {
        let rows = try database.query(Self.passColumnLengthQuery)
        return rows.first?.int64("CHARACTER_MAXIMUM_LENGTH").map(Int.init) ?? 0
    }

    private static let legacyCondition = "pass NOT LIKE BINARY '$argon2id$%'"

    /// How many accounts still have their password stored as the app sent it.
    public func legacyPasswordCount() throws(DatabaseError) -> Int {
        Int(try database.query("SELECT COUNT(*) AS n FROM login WHERE \(Self.legacyCondition)").first?.int64("n") ?? 0)
    }

    /// Accounts above `userID` whose password is still stored as the app
    /// sent it, in IdUser order, at most `limit`: a large table in batches.
    public func legacyPasswords(after userID: Int64, limit: Int) throws(DatabaseError) -> [(userID: Int64, password: [UInt8])] {
        try database.query("SELECT IdUser, pass FROM login WHERE IdUser > ? AND \(Self.legacyCondition) ORDER BY IdUser LIMIT \(limit)",
                           [.int(userID)]).compactMap { row in
            guard let id = row.int64("IdUser"), let pass = row["pass"] else { return nil }
            return (id, pass)
        }
    }
}
