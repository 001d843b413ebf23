/// Where sessions live, keyed by the id in the `PHPSESSID` cookie. Ids are
/// only ever looked up when well-formed (`SessionID`), and a session is only
/// created under a fresh id of the store's choosing.
public protocol SessionStore {
    /// The session with this id, if it exists and has not expired.
    func load(id: [UInt8]) throws -> Session?
    /// Stores a login's variables under a fresh id (never an id the client
    /// chose), listed in the user's index; the user's oldest sessions
    /// beyond the store's limit end.
    func create(_ variables: [(String, PHPValue)], user: Int64) throws -> Session
    /// Ends a session (logout, or the old id after a login).
    func destroy(id: String)
    /// Ends every session of `user` but `kept` (a new password, a deleted
    /// account): those its index lists, that is every session this server
    /// made for the user.
    func endSessions(of user: Int64, except kept: String?) throws
    /// Removes expired sessions; returns how many.
    @discardableResult
    func sweep() -> Int
}
