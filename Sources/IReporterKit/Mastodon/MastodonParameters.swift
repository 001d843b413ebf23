/// A Mastodon-compatible API request's parameters: the query string's and
/// the body's, whichever way the client sent the body (urlencoded,
/// multipart, JSON). Clients differ: Mastodon.py sends forms, toot and the
/// browser clients JSON, and lists come as `name[]=…` or a JSON array.
/// The body's value wins over the query string's.
public struct MastodonParameters: Sendable {
    private var single: [String: [UInt8]] = [:]
    private var lists: [String: [[UInt8]]] = [:]
    private var files: [String: UploadedFile] = [:]

    public init() {}

    /// The query string's parameters and the form's (urlencoded or multipart).
    public init(query: FormData, body: FormData = FormData()) {
        for form in [query, body] {
            single.merge(form.fields) { _, later in later }
            single.merge(form.nestedFields) { _, later in later }
            lists.merge(form.arrayValues) { _, later in later }
            files.merge(form.files) { _, later in later }
        }
    }

    /// The query string's parameters and a JSON body's object members
    /// (strings, numbers and booleans as text; arrays as lists; an object's
    /// members as a form names them, `home[last_read_id]`).
    public init(query: FormData, json: JSONValue) throws(MastodonError) {
        self.init(query: query)
        guard case .object(let members) = json else {
            throw MastodonError(status: 422, message: "Validation failed: the body must be a JSON object")
        }
        for (name, value) in members {
            if case .array(let elements) = value {
                lists[name] = elements.compactMap(Self.text)
            } else if case .object(let inner) = value {
                for (member, value) in inner {
                    if case .array(let elements) = value {
                        lists["\(name)[\(member)]"] = elements.compactMap(Self.text)
                    } else if let text = Self.text(value) {
                        single["\(name)[\(member)]"] = text
                    }
                }
            } else if let text = Self.text(value) {
                single[name] = text
            }
        }
    }

    /// A JSON scalar as the form field it stands in for; nil for null, lists
    /// and objects (deeper than one level, no endpoint of ours takes them).
    private static func text(_ value: JSONValue) -> [UInt8]? {
        switch value {
        case .string(let bytes), .number(let bytes): bytes
        case .bool(let flag): Array((flag ? "true" : "false").utf8)
        case .null, .array, .object: nil
        }
    }

    /// A parameter's bytes, nil when absent or empty (as Rails' `present?`).
    public func bytes(_ name: String) -> [UInt8]? {
        guard let value = single[name], !value.isEmpty else { return nil }
        return value
    }

    /// Whether the parameter was sent, even empty (`description=` clears one).
    public func isSent(_ name: String) -> Bool { single[name] != nil }

    /// A parameter as text, nil when absent, empty or not UTF-8.
    public func string(_ name: String) -> String? {
        bytes(name).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// A list parameter (`name[]=…` or a JSON array); a single `name=…`
    /// counts as a list of one.
    public func strings(_ name: String) -> [String] {
        if let list = lists[name] { return list.compactMap { String(validating: $0, as: UTF8.self) } }
        return string(name).map { [$0] } ?? []
    }

    /// A whole number, nil when absent; 422 when it is no number.
    public func integer(_ name: String) throws(MastodonError) -> Int64? {
        guard let text = bytes(name) else { return nil }
        guard let value = CommandParameter.wholeNumber(text, in: 0...Int64.max) else {
            throw MastodonError(status: 422, message: "Validation failed: \(name) must be a whole number")
        }
        return value
    }

    /// Rails' boolean casting, which Mastodon's clients rely on: `true`,
    /// `1`, `on`, `t` are true, other values false; nil when absent.
    public func bool(_ name: String) -> Bool? {
        guard let text = string(name) else { return nil }
        return ["true", "1", "on", "t", "yes"].contains(text.lowercased())
    }

    public func file(_ name: String) -> UploadedFile? { files[name] }
}
