/// The photos of a `stream` or `search` answer with `extras` (the JSON of
/// `PhotoListWithExtras`, which the commands may answer from their caches
/// already rendered) read back into the typed rows it was rendered from,
/// for the Mastodon entities.
public enum StreamRows {
    /// The extras the statuses show.
    public static let extras = "likes,comments,myvote,created,width,height,secret,description"

    public struct Malformed: Error, CustomStringConvertible {
        public let description: String
    }

    public static func decode(_ answer: [UInt8]) throws -> [(photo: PhotoRecord, extras: PhotoExtras)] {
        guard case .array(let rows)? = try JSONParser.parse(answer)["result"] else {
            throw Malformed(description: "a photo list without its result")
        }
        return try rows.map(row)
    }

    private static func row(_ value: JSONValue) throws -> (photo: PhotoRecord, extras: PhotoExtras) {
        func number(_ name: String) throws -> Int64? {
            switch value[name] {
            case .null?, nil: return nil
            case .string(let digits)?:
                if let number = Int64(String(decoding: digits, as: UTF8.self)) { return number }
                fallthrough
            default: throw Malformed(description: "\(name) is not a number")
            }
        }
        func text(_ name: String) -> [UInt8]? {
            if case .string(let bytes)? = value[name] { bytes } else { nil }
        }
        guard let id = try number("IdPhoto"), let userID = try number("IdUser") else {
            throw Malformed(description: "a photo without IdPhoto or IdUser")
        }
        let photo = PhotoRecord(id: id, title: text("title"), userID: userID, username: text("username"))
        var details: PhotoDetails?
        if let created = try number("created"), let width = try number("width"), let height = try number("height") {
            details = PhotoDetails(created: created, width: Int(width), height: Int(height))
        }
        var extras = PhotoExtras(likes: try number("likes") ?? 0, dislikes: try number("dislikes") ?? 0,
                                 comments: try number("comments") ?? 0, myVote: try number("myvote").flatMap(Vote.init(rawValue:)),
                                 details: details)
        extras.secret = text("secret").flatMap { PhotoSecret(String(decoding: $0, as: UTF8.self)) }
        extras.description = text("description")
        return (photo, extras)
    }
}
