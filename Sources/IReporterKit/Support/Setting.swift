#if canImport(Glibc)
import Glibc
#endif

/// One configuration key: how its value is read into a `Configuration`
/// property and written back, and its line in docs/CONFIGURATION.md.
/// `Configuration.settings` lists them all.
public struct Setting: Sendable {
    public let key: String
    /// The meaning column of the reference table (Markdown, one line).
    public let doc: String
    let rule: Rule

    init(_ key: String, _ rule: Rule, _ doc: String) {
        (self.key, self.rule, self.doc) = (key, rule, doc)
    }

    /// The built-in default as a config file would write it. It is read from
    /// the property's initial value, so the default is declared only there.
    public var defaultText: String { rule.format(Configuration()) }

    func apply(_ value: String, to configuration: inout Configuration) throws(ConfigurationError) {
        try rule.parse(&configuration, key, value)
    }

    /// How a value becomes a property, and back.
    struct Rule: Sendable {
        let parse: @Sendable (inout Configuration, _ key: String, _ value: String) throws(ConfigurationError) -> Void
        let format: @Sendable (Configuration) -> String
        /// What values are allowed, for the reference table (numbers only: the
        /// other rules' doc lines name their values).
        var range: ClosedRange<Int>? = nil
    }
}

extension Setting.Rule {
    /// Sendable so that the closures of the static table may capture it.
    typealias Field<Value> = WritableKeyPath<Configuration, Value> & Sendable

    /// Stored as written; for most, empty turns the feature off.
    static func text(_ field: Field<String>) -> Self {
        Self(parse: { configuration, _, value in configuration[keyPath: field] = value },
             format: { $0[keyPath: field] })
    }

    static func number<Number: FixedWidthInteger & Sendable>(_ field: Field<Number>, _ range: ClosedRange<Int>) -> Self {
        // A range the property cannot hold would trap on the first such value; trap at the declaration instead.
        precondition(Number(exactly: range.lowerBound) != nil && Number(exactly: range.upperBound) != nil)
        return Self(parse: { configuration, key, value throws(ConfigurationError) in
                        guard let number = Int(value), range.contains(number) else {
                            throw ConfigurationError("\(key) must be a whole number in \(range.lowerBound)...\(range.upperBound), not \"\(value)\"")
                        }
                        configuration[keyPath: field] = Number(number)
                    },
                    format: { String($0[keyPath: field]) },
                    range: range)
    }

    /// A permission mode in octal, like `0660`.
    static func octal(_ field: Field<mode_t>) -> Self {
        Self(parse: { configuration, key, value throws(ConfigurationError) in
                 guard let mode = mode_t(value, radix: 8), mode <= 0o777 else {
                     throw ConfigurationError("\(key) must be octal like 0660, not \"\(value)\"")
                 }
                 configuration[keyPath: field] = mode
             },
             format: { "0" + String($0[keyPath: field], radix: 8) })
    }

    /// One of a few words, each standing for a value of the property.
    static func choice<Value: Equatable & Sendable>(_ field: Field<Value>, _ words: [(String, Value)]) -> Self {
        let names = words.map(\.0)
        // The messages' wording: "auto or always", "one of: a, b, c".
        let allowed = names.count == 2 ? "\(names[0]) or \(names[1])" : "one of: " + names.joined(separator: ", ")
        return Self(parse: { configuration, key, value throws(ConfigurationError) in
                        guard let word = words.first(where: { $0.0 == value }) else {
                            throw ConfigurationError("\(key) must be \(allowed), not \"\(value)\"")
                        }
                        configuration[keyPath: field] = word.1
                    },
                    format: { configuration in words.first { $0.1 == configuration[keyPath: field] }?.0 ?? "" })
    }

    /// An enum's cases by their names, so that a new case is accepted at once.
    static func choice<Value: CaseIterable & RawRepresentable & Equatable & Sendable>(_ field: Field<Value>) -> Self
    where Value.RawValue == String {
        choice(field, Value.allCases.map { ($0.rawValue, $0) })
    }

    /// Comma-separated IP addresses, each checked now.
    static func addressList(_ field: Field<ClientAllowList>) -> Self {
        Self(parse: { configuration, key, value throws(ConfigurationError) in
                 configuration[keyPath: field] = try ClientAllowList(value, key: key)
             },
             format: { $0[keyPath: field].description })
    }

    /// A path that must be readable now, so that `--check-config` catches it
    /// rather than the first database connection.
    static func readableFile(_ field: Field<String?>) -> Self {
        Self(parse: { configuration, key, value throws(ConfigurationError) in
                 guard access(value, R_OK) == 0 else { throw ConfigurationError("\(key) \(value) is not readable") }
                 configuration[keyPath: field] = value
             },
             format: { $0[keyPath: field] ?? "" })
    }

    /// `db_url` replaces the connection settings, except the charset (unless
    /// the URL gives one), the option file and the cluster's nodes, which
    /// may have come first.
    static let databaseURL = Self(
        parse: { configuration, _, value throws(ConfigurationError) in
            let previous = configuration.database
            configuration.database = try DatabaseSettings(url: value)
            if !value.contains("charset=") { configuration.database.charset = previous.charset }
            (configuration.database.optionFile, configuration.database.optionGroup) = (previous.optionFile, previous.optionGroup)
            (configuration.database.nodes, configuration.database.syncWait) = (previous.nodes, previous.syncWait)
        },
        format: { $0.database.url })

    /// `db_nodes`: parsed now, so `--check-config` catches a bad one; empty = one server.
    static let databaseNodes = Self(
        parse: { configuration, _, value throws(ConfigurationError) in
            configuration.database.nodes = try DatabaseNode.list(value)
        },
        format: { $0.database.nodes.map(\.description).joined(separator: ",") })

    /// `db_replicas`: parsed now, so `--check-config` catches a bad one; empty = none.
    static let databaseReplicas = Self(
        parse: { configuration, _, value throws(ConfigurationError) in
            configuration.replicas = try DatabaseNode.list(value)
        },
        format: { $0.replicas.map(\.description).joined(separator: ",") })

    /// `redis_url`: parsed now (so `--check-config` catches a bad one); empty = none.
    static let redisURL = Self(
        parse: { configuration, _, value throws(ConfigurationError) in
            configuration.redis = value.isEmpty ? nil : try RedisSettings(url: value)
        },
        format: { $0.redis?.url ?? "" })

    /// `public_url`: `http[s]://HOST[:PORT][/PATH]`, kept with a final `/`; empty = none.
    static let publicURL = Self(
        parse: { configuration, key, value throws(ConfigurationError) in
            guard !value.isEmpty else { configuration.publicURL = ""; return }
            let rest = value.hasPrefix("https://") ? value.dropFirst(8) : value.hasPrefix("http://") ? value.dropFirst(7) : nil
            let host = rest.map { $0.prefix { $0 != "/" } } ?? ""
            guard let rest, !host.isEmpty, !rest.contains(where: { $0 == "?" || $0 == "#" || $0 == "@" || $0 == "\\" }),
                  rest.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\"" && $0 != "<" && $0 != ">" }) else {
                throw ConfigurationError("\(key) must be http[s]://HOST[:PORT][/PATH/], not \"\(value)\"")
            }
            configuration.publicURL = value.hasSuffix("/") ? value : value + "/"
        },
        format: { $0.publicURL })

    static let s3URL = Self(
        parse: { configuration, _, value throws(ConfigurationError) in
            configuration.s3 = value.isEmpty ? nil : try S3Settings(url: value)
        },
        format: { $0.s3?.url ?? "" })
}
