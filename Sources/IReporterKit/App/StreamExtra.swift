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
}
