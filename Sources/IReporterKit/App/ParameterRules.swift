/// How the new commands read their numbers: ids, cursors and counts are
/// plain decimal whole numbers in range, anything else (a sign, a space, a
/// letter, more than Int64 holds) is a clear error. The 2012 app's
/// parameters keep PHP's lenient `(int)` (`PHPStrings.intCast`). An empty
/// value counts as absent, as an empty form field does.
enum ParameterRules {
    struct Invalid: APIFailure {
        let name: String
        let range: ClosedRange<Int64>

        var message: String {
            range.upperBound == .max ? "Invalid \(name): a whole number from \(range.lowerBound) is expected"
                : "Invalid \(name): a whole number from \(range.lowerBound) to \(range.upperBound) is expected"
        }
    }

    struct Missing: APIFailure {
        let name: String
        var message: String { "Missing \(name)" }
    }

    /// The most rows one page holds, and how many when `count` is absent.
    static let pageSizes: ClosedRange<Int64> = 1...100
    static let defaultPageSize = 50

    /// The number in `name`, nil when absent.
    static func number(_ parameters: any RequestParameters, _ name: String,
                       in range: ClosedRange<Int64> = 1...Int64.max) throws(Invalid) -> Int64? {
        guard let text = parameters.field(name), !text.isEmpty else { return nil }
        guard text.count <= 19, text.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let value = Int64(String(decoding: text, as: UTF8.self)), range.contains(value) else {
            throw Invalid(name: name, range: range)
        }
        return value
    }

    /// An id the command cannot do without.
    static func requiredID(_ parameters: any RequestParameters, _ name: String) throws -> Int64 {
        guard let id = try number(parameters, name) else { throw Missing(name: name) }
        return id
    }

    /// `since`, `before` and `count`.
    static func cursor(_ parameters: any RequestParameters) throws(Invalid) -> PageCursor {
        PageCursor(since: try number(parameters, "since", in: 0...Int64.max) ?? 0,
                   before: try number(parameters, "before") ?? .max,
                   count: Int(try number(parameters, "count", in: pageSizes) ?? Int64(defaultPageSize)))
    }

    /// Whether any of the cursor's parameters was sent.
    static func hasCursor(_ parameters: any RequestParameters) -> Bool {
        ["since", "before", "count"].contains { parameters.field($0)?.isEmpty == false }
    }
}
