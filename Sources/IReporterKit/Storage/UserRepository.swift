/// The original `login` table: `IdUser`, `username`, `pass` (latin1,
/// compared with the column's collation, so case and trailing spaces are
/// ignored exactly as they were for the PHP version).
public struct UserRepository {
    public static let maxUsernameBytes = 45
    public static let maxPasswordBytes = 45

    let database: DatabaseConnection

    public init(database: DatabaseConnection) { self.database = database }

    public func exists(username: [UInt8]) throws(DatabaseError) -> Bool {
        !(try database.query("SELECT username FROM login WHERE username = ? LIMIT 1", [.bytes(username)])).isEmpty
    }

    public func insert(username: [UInt8], password: [UInt8]) throws(DatabaseError) {
        try database.execute("INSERT INTO login (username, pass) VALUES (?, ?)", [.bytes(username), .bytes(password)])
    }

    /// The account's row as stored (`IdUser`, `username`), if the credentials match.
    public func authenticate(username: [UInt8], password: [UInt8]) throws(DatabaseError) -> Row? {
        try database.query("SELECT IdUser, username FROM login WHERE username = ? AND pass = ? LIMIT 1",
                           [.bytes(username), .bytes(password)]).first
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
