/// Sessions in memory, for the App's unit tests.
public final class InMemorySessionStore: SessionStore {
    public private(set) var sessions: [String: [(String, PHPValue)]] = [:]
    /// Each user's session ids, oldest first.
    private var byUser: [Int64: [String]] = [:]
    /// Live sessions kept per user; 0 = no limit.
    public var maxPerUser: Int

    public init(maxPerUser: Int = 0) { self.maxPerUser = maxPerUser }

    public func load(id: [UInt8]) throws -> Session? {
        guard SessionID.isWellFormed(id) else { return nil }
        let id = String(decoding: id, as: UTF8.self)
        return sessions[id].map { Session(id: id, entries: $0) }
    }

    public func create(_ variables: [(String, PHPValue)], user: Int64) throws -> Session {
        var id = SessionID.new()
        while sessions[id] != nil { id = SessionID.new() }
        sessions[id] = variables
        var live = (byUser[user] ?? []).filter { sessions[$0] != nil } + [id]
        if maxPerUser > 0 && live.count > maxPerUser {
            for old in live.prefix(live.count - maxPerUser) { sessions[old] = nil }
            live.removeFirst(live.count - maxPerUser)
        }
        byUser[user] = live
        return Session(id: id, entries: variables)
    }

    public func destroy(id: String) { sessions[id] = nil }

    public func endSessions(of user: Int64, except kept: String?) {
        for id in byUser[user] ?? [] where id != kept { sessions[id] = nil }
        byUser[user] = byUser[user]?.filter { $0 == kept }
    }

    /// Nothing expires in memory.
    @discardableResult
    public func sweep() -> Int { 0 }
}
