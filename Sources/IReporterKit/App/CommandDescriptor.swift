/// A command as every door sees it, declared once in the command's own file
/// (its `descriptor`). From it: the router's registration under `name`;
/// the JSON-RPC method (a command with file parts, or whose answer is a
/// file, is a form command only);
/// its `rpc.discover` entry (typed parameters, result, errors); the
/// cross-site rule (a read-only command may be sent from another web site);
/// docs/API.md's parameter tables (`CommandDescriptorTests` compares them).
public struct CommandDescriptor: Sendable {
    public var name: String
    /// One line: what it does (OpenRPC's `summary`).
    public var summary: String
    public var parameters: [CommandParameter]
    /// The multipart file parts it takes (`file`): not possible in JSON.
    public var fileParts: [String] = []
    /// Changes nothing: a browser may send it from another web site.
    public var readOnly = false
    /// Set by the router from the command's type (`SignedInCommand`).
    public internal(set) var signIn = false
    public var rateLimit: RateLimit?
    /// Checks or hashes a password (Argon2id, 19 MiB and tens of ms each): a
    /// JSON-RPC batch may hold one such call (`JSONRPCService`).
    public var checksAPassword = false
    /// The kinds of the command's own failures; those its parameters,
    /// sign-in, the cross-site rule, the rate limit and an unavailable
    /// service give are added in `errors`.
    public var failures: [FailureKind] = []
    public var result: ResultShape

    public init(_ name: String, _ summary: String, parameters: [CommandParameter] = [], fileParts: [String] = [],
                readOnly: Bool = false, rateLimit: RateLimit? = nil, checksAPassword: Bool = false, failures: [FailureKind] = [],
                result: ResultShape) {
        self.name = name
        self.summary = summary
        self.parameters = parameters
        self.fileParts = fileParts
        self.readOnly = readOnly
        self.rateLimit = rateLimit
        self.checksAPassword = checksAPassword
        self.failures = failures
        self.result = result
    }

    /// Why it is a form command only (nil: a JSON-RPC method too): JSON
    /// carries no file, in or out. docs/API.md's JSON-RPC column says it.
    public var formOnlyReason: String? {
        if !fileParts.isEmpty { return "file part " + fileParts.map { "`\($0)`" }.joined(separator: ", ") }
        if let type = result.fileType { return "answers `\(type)`" }
        return nil
    }

    /// A JSON-RPC method: it takes no file and answers none.
    public var isJSONRPCMethod: Bool { formOnlyReason == nil }

    /// Every kind of failure it may answer, in code order.
    public var errors: [FailureKind] {
        var kinds = Set(failures)
        if parameters.contains(where: \.canFail) { kinds.insert(.invalidParameters) }
        if signIn { kinds.insert(.authorization) }
        if !readOnly { kinds.insert(.notAllowed) }
        if rateLimit != nil || checksAPassword { kinds.insert(.rateLimited) }
        kinds.insert(.unavailable)
        return FailureKind.allCases.filter(kinds.contains)
    }
}

/// A per-user hourly limit: the setting that holds it (0: none) and the
/// failure past it. The command charges it where its rules say (after its
/// own checks, so that a refused request costs nothing).
public struct RateLimit: Sendable {
    /// The configuration key (docs/CONFIGURATION.md), e.g. `comment_rate_limit`.
    public let setting: String
    /// The shared counter's name, before the user's id.
    let counter: String
    let failure: any APIFailure
    private let limit: KeyPath<Configuration, Int> & Sendable

    init(_ setting: String, _ limit: KeyPath<Configuration, Int> & Sendable, counter: String, failure: any APIFailure) {
        (self.setting, self.limit, self.counter, self.failure) = (setting, limit, counter, failure)
    }

    /// The per-hour limit in force.
    func perHour(_ policy: AppServices.Policy) -> Int { policy.settings[keyPath: limit] }

    /// Counts one for `user` against `perHour` (0: no limit); the failure
    /// once the hour's are spent.
    func charge(_ user: SignedInUser, perHour: Int, counters: any SharedCounters) throws {
        if perHour > 0, try !counters.allow("\(counter):\(user.id)", limit: Int64(perHour), windowSeconds: 3600) {
            throw failure
        }
    }
}

/// One named parameter of a command: its type and limits, and the one
/// parser of its kind. An empty value counts as absent, as an empty form
/// field does. Numbers are plain decimal whole numbers in range: a sign, a
/// space, a letter, more than Int64 holds is a clear error. (The 2012
/// app's `IdPhoto` keeps PHP's lenient `(int)`.)
public struct CommandParameter: Sendable {
    public enum Kind: Sendable {
        case integer(ClosedRange<Int64>)
        /// PHP's `(int)` of whatever is sent: never an error.
        case phpInteger
        /// Bytes as sent; at most `maxBytes` when given.
        case text(maxBytes: Int?)
        /// One of these words.
        case choice([String])
        /// A comma list of these words (each at most once; answered in this order).
        case list([String])
    }

    public let name: String
    public let kind: Kind
    public let required: Bool
    /// The meaning column of docs/API.md's table (Markdown, one line).
    public let summary: String
    /// The answer to a bad value; nil: `Invalid <name>: a whole number…`.
    let invalid: (any APIFailure)?

    init(_ name: String, _ kind: Kind, required: Bool = false, _ summary: String, invalid: (any APIFailure)? = nil) {
        (self.name, self.kind, self.required, self.summary, self.invalid) = (name, kind, required, summary, invalid)
    }

    /// Whether some value of it is refused.
    var canFail: Bool {
        switch kind {
        case .integer, .choice, .list: true
        case .text(let maxBytes): maxBytes != nil
        case .phpInteger: false
        }
    }

    /// The value as sent, nil when absent or empty.
    func bytes(_ parameters: any RequestParameters) -> [UInt8]? {
        guard let value = parameters.field(name), !value.isEmpty else { return nil }
        return value
    }

    /// An `.integer`'s value, nil when absent: the one number parser.
    func integer(_ parameters: any RequestParameters) throws -> Int64? {
        guard case .integer(let range) = kind else { preconditionFailure("\(name) is no integer") }
        guard let text = bytes(parameters) else { return nil }
        guard let value = Self.wholeNumber(text, in: range) else { throw invalid ?? ParameterRules.Invalid(name: name, range: range) }
        return value
    }

    /// Plain decimal digits of a number in `range`; nil for anything else
    /// (empty, a sign, a space, a letter, more than Int64 holds).
    static func wholeNumber(_ text: [UInt8], in range: ClosedRange<Int64>) -> Int64? {
        guard !text.isEmpty, text.count <= 19, text.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let value = Int64(String(decoding: text, as: UTF8.self)), range.contains(value) else { return nil }
        return value
    }

    /// An `.integer` the command cannot do without: `Missing <name>` when absent.
    func requiredInteger(_ parameters: any RequestParameters) throws -> Int64 {
        guard let value = try integer(parameters) else { throw ParameterRules.Missing(name: name) }
        return value
    }

    /// A `.phpInteger`'s value: 0 when absent or not a number.
    func phpInteger(_ parameters: any RequestParameters) -> Int64 {
        PHPStrings.intCast(parameters.field(name) ?? [])
    }

    /// A `.text`'s bytes (empty when absent), refused over its `maxBytes`.
    func text(_ parameters: any RequestParameters) throws -> [UInt8] {
        let value = parameters.field(name) ?? []
        if case .text(let maxBytes?) = kind, value.count > maxBytes { throw invalid ?? ParameterRules.InvalidValue(name: name) }
        return value
    }

    /// A `.choice`'s word as the enumeration's case, nil when absent.
    func choice<Word: RawRepresentable<String>>(_ parameters: any RequestParameters) throws -> Word? {
        guard let text = bytes(parameters) else { return nil }
        guard let word = Word(rawValue: String(decoding: text, as: UTF8.self)) else { throw invalid ?? ParameterRules.InvalidValue(name: name) }
        return word
    }

    /// A `.list`'s words, in the enumeration's order, each once; empty when absent.
    func list<Word: RawRepresentable<String> & CaseIterable & Hashable>(_ parameters: any RequestParameters) throws -> [Word] {
        guard let text = bytes(parameters) else { return [] }
        var chosen = Set<Word>()
        for name in text.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            guard let word = Word(rawValue: String(decoding: name, as: UTF8.self)) else {
                throw invalid ?? ParameterRules.InvalidValue(name: self.name)
            }
            chosen.insert(word)
        }
        return Word.allCases.filter(chosen.contains)
    }
}

extension CommandParameter {
    static func choice<Word: RawRepresentable<String> & CaseIterable>(_ name: String, of: Word.Type, required: Bool = false,
                                                                      _ summary: String, invalid: any APIFailure) -> Self {
        Self(name, .choice(Word.allCases.map(\.rawValue)), required: required, summary, invalid: invalid)
    }

    static func list<Word: RawRepresentable<String> & CaseIterable>(_ name: String, of: Word.Type, _ summary: String,
                                                                    invalid: any APIFailure) -> Self {
        Self(name, .list(Word.allCases.map(\.rawValue)), summary, invalid: invalid)
    }

    /// An id the command cannot do without (`IdPhoto`, `IdComment`).
    static func id(_ name: String, _ summary: String) -> Self { Self(name, .integer(1...Int64.max), required: true, summary) }

    /// The photo a command is about.
    static let photo = id("IdPhoto", "the photo")
    /// The account a command is about.
    static let account = id("IdUser", "the account")

    /// A page of a list, newest first, as `stream` and `comments` take it.
    static let since = Self("since", .integer(0...Int64.max), "only newer than this id (what a client polls with)")
    static let after = Self("after", .integer(0...Int64.max),
                            "only newer than this id, the ones just after it (the page before, still newest first)")
    static let before = Self("before", .integer(1...Int64.max), "only older than this id (the next page)")
    static let count = Self("count", .integer(ParameterRules.pageSizes), "how many, 1 to 100 (default 50)")
    static let cursor = [since, after, before, count]

    /// `stream`'s and `search`'s `extras`.
    static func extras(invalid: any APIFailure = StreamExtra.Unknown()) -> Self {
        list("extras", of: StreamExtra.self, "fields added to each photo (`stream`'s `extras`)", invalid: invalid)
    }

    /// `upload`'s and `preview`'s `effect`.
    static func effect(required: Bool) -> Self {
        choice("effect", of: PhotoEffect.self, required: required, "an effect that `effects` lists", invalid: PhotoEffect.Unknown())
    }
}

extension CommandDescriptor {
    /// docs/API.md's reference tables, made from the descriptors:
    /// `CommandDescriptorTests` fails (and prints them) while they differ.
    public static func referenceTables(_ descriptors: [CommandDescriptor]) -> String {
        var text = "| command | signed in | from other web sites | per-hour limit | JSON-RPC | errors (JSON-RPC codes) |\n"
        text += "|---|---|---|---|---|---|\n"
        for command in descriptors {
            let limit = command.rateLimit.map { "`\($0.setting)`" } ?? "none"
            let rpc = command.formOnlyReason.map { "no: " + $0 } ?? "yes"
            let errors = command.errors.map { String($0.code) }.joined(separator: " ")
            text += "| `\(command.name)` | \(command.signIn ? "yes" : "no") | \(command.readOnly ? "yes" : "no") | \(limit) | \(rpc) | \(errors) |\n"
        }
        text += "\n| command | parameter | type | meaning |\n|---|---|---|---|\n"
        for command in descriptors {
            for parameter in command.parameters {
                text += "| `\(command.name)` | `\(parameter.name)` | \(parameter.typeText) | \(parameter.summary) |\n"
            }
        }
        return text
    }
}

extension CommandParameter {
    /// The type column of docs/API.md's table.
    var typeText: String {
        let type = switch kind {
        case .integer(let range): range.upperBound == .max ? "number from \(range.lowerBound)"
                                                          : "number \(range.lowerBound) to \(range.upperBound)"
        case .phpInteger: "number (PHP's `(int)`)"
        case .text(nil): "text"
        case .text(let maxBytes?): "text, at most \(maxBytes) bytes"
        case .choice(let words) where words.count == 2: "`\(words[0])` or `\(words[1])`"
        case .choice(let words): "one of " + words.map { "`\($0)`" }.joined(separator: ", ")
        case .list(let words): "comma list of " + words.map { "`\($0)`" }.joined(separator: ", ")
        }
        return required ? "required " + type : type
    }
}
