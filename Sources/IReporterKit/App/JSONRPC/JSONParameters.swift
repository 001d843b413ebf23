/// A JSON-RPC call's named parameters as the commands read form fields:
/// a string's bytes, a number's text, true as "1" and false as "" (what a
/// PHP form makes of them), null as absent. Files are not sent this way
/// (`upload` and `preview` take multipart forms).
struct JSONParameters: RequestParameters {
    let members: [(String, JSONValue)]

    func field(_ name: String) -> [UInt8]? {
        switch members.last(where: { $0.0 == name })?.1 {
        case .string(let bytes)?: bytes
        case .number(let text)?: Self.integral(text) ?? text
        case .bool(let value)?: value ? Array("1".utf8) : []
        case .null?, .array?, .object?, nil: nil
        }
    }

    func file(_ name: String) -> UploadedFile? { nil }

    /// `10.0` or `1e1` as `10`: a whole number however JSON spells it (JSON
    /// Schema's "integer" takes them), worked out on the digits, exactly.
    /// Nil for a number as written already, one with a fraction, or one of
    /// more than 19 digits.
    static func integral(_ text: [UInt8]) -> [UInt8]? {
        // A JSON number's characters: digits, `-`, `+`, `.` and one `e` or `E`.
        let parts = String(decoding: text, as: UTF8.self).lowercased().split(separator: "e", omittingEmptySubsequences: false)
        guard parts.count <= 2, let number = parts.first, number.contains(".") || parts.count == 2 else { return nil }
        let exponent = parts.count == 2 ? Int(parts[1]) : 0
        let negative = number.hasPrefix("-")
        let pieces = number.drop { $0 == "-" }.split(separator: ".", omittingEmptySubsequences: false)
        guard let exponent, abs(exponent) <= 40, (1...2).contains(pieces.count) else { return nil }
        var digits = Array(pieces[0] + (pieces.count == 2 ? pieces[1] : ""))
        let shift = exponent - (pieces.count == 2 ? pieces[1].count : 0)
        if shift >= 0 {
            digits += Array(repeating: "0", count: shift)
        } else {
            guard digits.suffix(-shift).allSatisfy({ $0 == "0" }), digits.count >= -shift else { return nil }
            digits.removeLast(-shift)
        }
        let whole = String(digits.drop { $0 == "0" })
        guard whole.count <= 19, whole.allSatisfy(\.isASCIIDigit) else { return nil }
        return Array(((negative && !whole.isEmpty ? "-" : "") + (whole.isEmpty ? "0" : whole)).utf8)
    }

    /// The first member's name that `declared` does not list: a misspelled
    /// optional parameter would otherwise be taken as absent, without a word.
    func firstUndeclared(_ declared: [CommandParameter]) -> String? {
        members.first { member in !declared.contains { $0.name == member.0 } }?.0
    }

    /// The first member that is not a string, number, boolean or null.
    var firstUnusable: String? {
        members.first { member in
            switch member.1 {
            case .array, .object: true
            case .null, .bool, .number, .string: false
            }
        }?.0
    }
}
