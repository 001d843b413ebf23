/// A JSON-RPC call's named parameters as the commands read form fields:
/// a string's bytes, a number's text, true as "1" and false as "" (what a
/// PHP form makes of them), null as absent. Files are not sent this way
/// (`upload` and `preview` take multipart forms).
struct JSONParameters: RequestParameters {
    let members: [(String, JSONValue)]

    func field(_ name: String) -> [UInt8]? {
        switch members.last(where: { $0.0 == name })?.1 {
        case .string(let bytes)?, .number(let bytes)?: bytes
        case .bool(let value)?: value ? Array("1".utf8) : []
        case .null?, .array?, .object?, nil: nil
        }
    }

    func file(_ name: String) -> UploadedFile? { nil }

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
