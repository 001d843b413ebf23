/// A field `stream` adds to each photo when asked with `extras`, in the
/// order they are rendered. `secret` and `server` name the photo's sizes:
/// `/iReporter/photos/<server>/<IdPhoto>_<secret>[_<size letter>].jpg`;
/// `description` is its alt text (the Mastodon-compatible API's).
public enum StreamExtra: String, CaseIterable, Sendable {
    case likes, dislikes, comments, myvote, created, width, height, secret, server, description

    /// The rows with the fields that the extras query does not read, when
    /// `fields` show them: the photos' secrets (`secret`, `server`) and
    /// descriptions, one query each.
    static func completing(_ rows: [(photo: PhotoRecord, extras: PhotoExtras)], for fields: [StreamExtra],
                           photos: any PhotoStore, media: any MediaStore) throws -> [(photo: PhotoRecord, extras: PhotoExtras)] {
        var rows = fields.contains(.secret) || fields.contains(.server) ? try photos.withSecrets(rows) : rows
        if fields.contains(.description), !rows.isEmpty {
            let descriptions = try media.descriptions(ofPhotos: rows.map(\.photo.id))
            for index in rows.indices { rows[index].extras.description = descriptions[rows[index].photo.id] }
        }
        return rows
    }

    struct Unknown: APIFailure {
        var message: String {
            "Invalid extras: a comma list of " + StreamExtra.allCases.map(\.rawValue).joined(separator: ", ") + " is expected"
        }
    }
}
