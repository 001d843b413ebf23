/// The parameter failures every command shares (`CommandParameter` reads
/// the values), and the page sizes of the lists.
enum ParameterRules {
    struct Invalid: APIFailure {
        let name: String
        let range: ClosedRange<Int64>

        var message: String {
            range.upperBound == .max ? "Invalid \(name): a whole number from \(range.lowerBound) is expected"
                : "Invalid \(name): a whole number from \(range.lowerBound) to \(range.upperBound) is expected"
        }
        var kind: FailureKind { .invalidParameters }
    }

    /// A word or text a parameter does not take (when the command has no words of its own for it).
    struct InvalidValue: APIFailure {
        let name: String
        var message: String { "Invalid \(name)" }
        var kind: FailureKind { .invalidParameters }
    }

    struct Missing: APIFailure {
        let name: String
        var message: String { "Missing \(name)" }
        var kind: FailureKind { .invalidParameters }
    }

    /// The most rows one page holds, and how many when `count` is absent.
    static let pageSizes: ClosedRange<Int64> = 1...100
    static let defaultPageSize = 50

    /// `since` or `after` (both: the larger), `before` and `count`; nil
    /// when none of them was sent.
    static func cursor(_ parameters: any RequestParameters) throws -> PageCursor? {
        let (since, after) = (try CommandParameter.since.integer(parameters), try CommandParameter.after.integer(parameters))
        let (before, count) = (try CommandParameter.before.integer(parameters), try CommandParameter.count.integer(parameters))
        guard since != nil || after != nil || before != nil || count != nil else { return nil }
        return PageCursor(since: max(since ?? 0, after ?? 0), before: before ?? .max, count: Int(count ?? Int64(defaultPageSize)),
                          fromSince: after != nil)
    }
}
