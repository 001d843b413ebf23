/// A field `stream` adds to each photo when asked with `extras`, in the
/// order they are rendered. `secret` and `server` name the photo's sizes:
/// `/iReporter/photos/<server>/<IdPhoto>_<secret>[_<size letter>].jpg`.
public enum StreamExtra: String, CaseIterable, Sendable {
    case likes, dislikes, comments, myvote, created, width, height, secret, server

    /// Whether the photos' secrets must be read for these fields.
    static func needSecrets(_ fields: [StreamExtra]) -> Bool { fields.contains(.secret) || fields.contains(.server) }

    struct Unknown: APIFailure {
        var message: String {
            "Invalid extras: a comma list of " + StreamExtra.allCases.map(\.rawValue).joined(separator: ", ") + " is expected"
        }
    }

    /// The extras of a comma list (`likes,myvote`), in rendering order; an
    /// unknown name is an error.
    static func list(_ text: [UInt8]) throws(Unknown) -> [StreamExtra] {
        var chosen = Set<StreamExtra>()
        for name in text.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            guard let extra = StreamExtra(rawValue: String(decoding: name, as: UTF8.self)) else { throw Unknown() }
            chosen.insert(extra)
        }
        return allCases.filter(chosen.contains)
    }
}
