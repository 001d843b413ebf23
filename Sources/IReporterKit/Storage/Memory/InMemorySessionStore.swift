/// Sessions in memory, for the App's unit tests.
public final class InMemorySessionStore: SessionStore {
    public private(set) var sessions: [String: [(String, PHPValue)]] = [:]

    public init() {}

    public func load(id: [UInt8]) throws -> Session? {
        guard SessionID.isWellFormed(id) else { return nil }
        let id = String(decoding: id, as: UTF8.self)
        return sessions[id].map { Session(id: id, entries: $0) }
    }

    public func create(_ variables: [(String, PHPValue)]) throws -> Session {
        var id = SessionID.new()
        while sessions[id] != nil { id = SessionID.new() }
        sessions[id] = variables
        return Session(id: id, entries: variables)
    }

    public func destroy(id: String) { sessions[id] = nil }

    /// Nothing expires in memory.
    @discardableResult
    public func sweep() -> Int { 0 }
}
