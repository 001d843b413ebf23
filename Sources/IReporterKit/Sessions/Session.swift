/// One session: its id and its PHP-serialized variables.
public struct Session: Sendable {
    public let id: String
    public var entries: [(String, PHPValue)]

    public init(id: String, entries: [(String, PHPValue)]) {
        self.id = id
        self.entries = entries
    }

    public subscript(name: String) -> PHPValue? {
        entries.first { $0.0 == name }?.1
    }

    /// Our own variable: when the session was made (PHP ignores it).
    static let createdKey = "ireporter_created"
}
