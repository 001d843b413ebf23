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
    /// Schema's "integer" takes them, and PHP's json_decode makes them 10).
    /// Nil for a number with a fraction, or beyond a Double's whole numbers.
    static func integral(_ text: [UInt8]) -> [UInt8]? {
        guard text.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }),
              let value = Double(String(decoding: text, as: UTF8.self)), value == value.rounded(),
              abs(value) <= 9_007_199_254_740_992 else { return nil }
        return Array(String(Int64(value)).utf8)
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
