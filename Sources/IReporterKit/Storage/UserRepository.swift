/// The original `login` table: `IdUser`, `username`, `pass` (latin1,
/// compared with the column's collation, so case and trailing spaces are
/// ignored exactly as they were for the PHP version).
public struct UserRepository {
    public static let maxUsernameBytes = 45
    /// What fits the original `pass varchar(45)` stored as sent.
    public static let maxPasswordBytes = 45
    /// Once passwords are hashed, the input length no longer depends on the column.
    public static let maxHashedPasswordBytes = 256
    /// `pass` must hold a PHC string (about 100 characters) before hashing starts.
    public static let hashColumnLength = 255

    let database: DatabaseConnection

    public init(database: DatabaseConnection) { self.database = database }

    public func exists(username: [UInt8]) throws(DatabaseError) -> Bool {
        !(try database.query("SELECT username FROM login WHERE username = ? LIMIT 1", [.bytes(username)])).isEmpty
    }

    /// Adds an account; false (nothing stored) when the password value is
    /// longer than `pass` is now.
    public func insert(username: [UInt8], password: [UInt8]) throws(DatabaseError) -> Bool {
        try database.execute("INSERT INTO login (username, pass) SELECT ?, ? FROM DUAL WHERE \(Self.fitsPassColumn)",
                             [.bytes(username), .bytes(password), .bytes(password)]).affectedRows == 1
    }

    /// The accounts with this name (`IdUser`, `username`, `pass`), in table
    /// order as the original's `LIMIT 1` saw them: the name is compared by
    /// the column's collation, the password by the caller, never in SQL.
    /// (No ORDER BY: without the index of sql/migrations/002 it would add a
    /// sort to the table scan.)
    public func candidates(username: [UInt8]) throws(DatabaseError) -> [Row] {
        try database.query("SELECT IdUser, username, pass FROM login WHERE username = ? LIMIT 16", [.bytes(username)])
    }

    /// Replaces a stored password, unless it changed meanwhile or the new
    /// value is longer than `pass` is now; true when it was replaced.
    @discardableResult
    public func replacePassword(userID: [UInt8], old: [UInt8], new: [UInt8]) throws(DatabaseError) -> Bool {
        try database.execute("UPDATE login SET pass = ? WHERE IdUser = ? AND pass = BINARY ? AND \(Self.fitsPassColumn)",
                             [.bytes(new), .bytes(userID), .bytes(old), .bytes(new)]).affectedRows == 1
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

    /// The declared length of `login.pass` (45 in the original schema).
    public func passwordColumnLength() throws(DatabaseError) -> Int {
        let rows = try database.query(Self.passColumnLengthQuery)
        guard let value = rows.first?.first ?? nil else { return 0 }
        return Int(String(decoding: value, as: UTF8.self)) ?? 0
    }

    /// Every row whose password is still stored as the app sent it.
    public func legacyPasswords() throws(DatabaseError) -> [Row] {
        try database.query("SELECT IdUser, pass FROM login WHERE pass NOT LIKE BINARY '$argon2id$%'")
    }

    /// Serialises registrations across workers and servers, so that two
    /// concurrent registrations of one name cannot both pass the check (the
    /// original table has no unique index to do it).
    public func withRegistrationLock<T>(_ body: () throws -> T) throws -> T {
        let granted = try database.query("SELECT GET_LOCK('iReporter.register', 10)")
        guard granted.first?.first == Array("1".utf8) else {
            throw DatabaseError(code: 0, message: "registration lock not granted")
        }
        defer { _ = try? database.query("SELECT RELEASE_LOCK('iReporter.register')") }
        return try body()
    }
}
