/// Where sessions live, keyed by the id in the `PHPSESSID` cookie. Ids are
/// only ever looked up when well-formed (`SessionID`), and a session is only
/// created under a fresh id of the store's choosing.
public protocol SessionStore {
    /// The session with this id, if it exists and has not expired.
    func load(id: [UInt8]) throws -> Session?
    /// Stores a login's variables under a fresh id (never an id the client
    /// chose); the user's oldest sessions beyond the store's limit end.
    func create(_ variables: [(String, PHPValue)], user: Int64) throws -> Session
    /// Ends a session (logout, or the old id after a login).
    func destroy(id: String)
    /// Removes expired sessions; returns how many.
    @discardableResult
    func sweep() -> Int
}
