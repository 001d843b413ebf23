/// The commands' results and, in this one place, their JSON: the
/// original's shapes, byte for byte (ids as strings, as mysqli gave them).

/// `{"result":[{"IdUser":"…","username":"…"}]}`: a login or registration.
public struct SignedIn: CommandOutput {
    public let user: UserRecord

    public var json: [UInt8] {
        var json = PHPJSONWriter()
        json.raw("{\"result\":[{\"IdUser\":")
        json.string(String(user.id))
        json.raw(",\"username\":")
        json.string(user.username)
        json.raw("}]}")
        return json.bytes
    }
}

/// `{"result":[{"IdPhoto":…,"title":…,"IdUser":…,"username":…},…]}`
public struct PhotoList: CommandOutput {
    public let photos: [PhotoRecord]

    public var json: [UInt8] {
        var json = PHPJSONWriter(capacity: 80 * photos.count + 16)
        json.raw("{\"result\":[")
        for (index, photo) in photos.enumerated() {
            if index > 0 { json.raw(",") }
            json.photoFields(photo)
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }
}

/// JSON rendered earlier (a cached stream).
public struct RenderedJSON: CommandOutput {
    public let json: [UInt8]
}

/// `{"successful":1}`: an upload.
public struct Successful: CommandOutput {
    public var json: [UInt8] { Array(#"{"successful":1}"#.utf8) }
}

/// `{"successful":1}`: an upload, with the new photo's id for the doors
/// that answer with the photo (the Mastodon API's status).
public struct Uploaded: CommandOutput {
    public let photoID: Int64
    public var json: [UInt8] { Successful().json }
}

/// The empty body the original gave for logout.
public struct NoContent: CommandOutput {
    public var json: [UInt8] { [] }
}

/// The stream with `extras`: each photo as `PhotoList` renders it, then the
/// chosen fields (numbers as strings, as the ids are; `myvote` is "1",
/// "-1" or "0", null without a session; `created`, `width`, `height` null
/// for a photo from before migration 003; `secret` and `server` null
/// without migration 006).
public struct PhotoListWithExtras: CommandOutput {
    public let photos: [(photo: PhotoRecord, extras: PhotoExtras)]
    public let fields: [StreamExtra]
    /// Whether a session told whose vote `myvote` is.
    public let hasViewer: Bool

    public var json: [UInt8] {
        var json = PHPJSONWriter(capacity: 160 * photos.count + 16)
        json.raw("{\"result\":[")
        for (index, (photo, extras)) in photos.enumerated() {
            if index > 0 { json.raw(",") }
            json.photoFields(photo)
            for field in fields {
                switch field {
                case .likes: json.number("likes", extras.likes)
                case .dislikes: json.number("dislikes", extras.dislikes)
                case .comments: json.number("comments", extras.comments)
                case .myvote: json.number("myvote", hasViewer ? extras.myVote?.rawValue ?? 0 : nil)
                case .created: json.number("created", extras.details?.created)
                case .width: json.number("width", extras.details.map { Int64($0.width) })
                case .height: json.number("height", extras.details.map { Int64($0.height) })
                case .secret: json.text("secret", extras.secret?.description)
                case .server: json.text("server", extras.secret.map { _ in PhotoTree.server(of: photo.id) })
                case .description:
                    json.raw(",\"description\":")
                    json.nullableString(extras.description)
                }
            }
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }
}

/// `{"result":[{"IdPhoto":…,"likes":…,"dislikes":…,"comments":…,"myvote":…}]}`:
/// a photo's counts and the caller's vote after a like, dislike or unvote.
public struct VoteTally: CommandOutput {
    public let photoID: Int64
    public let extras: PhotoExtras

    public var json: [UInt8] {
        var json = PHPJSONWriter()
        json.raw("{\"result\":[{\"IdPhoto\":")
        json.string(String(photoID))
        json.number("likes", extras.likes)
        json.number("dislikes", extras.dislikes)
        json.number("comments", extras.comments)
        json.number("myvote", extras.myVote?.rawValue ?? 0)
        json.raw("}]}")
        return json.bytes
    }
}

/// `{"result":[{"IdComment":…,"IdPhoto":…,"IdUser":…,"username":…,"text":…,"created":…},…]}`:
/// the text as stored, JSON-escaped (markup stays text).
public struct CommentList: CommandOutput {
    public let comments: [CommentRecord]

    public var json: [UInt8] {
        var json = PHPJSONWriter(capacity: 120 * comments.count + 16)
        json.raw("{\"result\":[")
        for (index, comment) in comments.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"IdComment\":")
            json.string(String(comment.id))
            json.number("IdPhoto", comment.photoID)
            json.number("IdUser", comment.userID)
            json.raw(",\"username\":")
            json.nullableString(comment.username)
            json.raw(",\"text\":")
            json.string(comment.text)
            json.number("created", comment.created)
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }
}

/// `{"result":[{"IdFollow":…,"IdUser":…,"username":…},…]}`: a person's
/// followers or following; `IdFollow` is the cursor (`before`).
public struct FollowList: CommandOutput {
    public let rows: [FollowRecord]

    public var json: [UInt8] {
        var json = PHPJSONWriter(capacity: 60 * rows.count + 16)
        json.raw("{\"result\":[")
        for (index, row) in rows.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"IdFollow\":")
            json.string(String(row.id))
            json.number("IdUser", row.userID)
            json.raw(",\"username\":")
            json.string(row.username)
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }
}

/// `{"result":[{"IdUser":…,"username":…,"photos":…,"followers":…,"following":…,"followed":…}]}`:
/// an account's counts; `followed` is whether the viewer follows it ("1"
/// or "0"), null without a session.
public struct PersonSummary: CommandOutput {
    public let person: PersonRecord
    public let counts: FollowCounts

    public var json: [UInt8] {
        var json = PHPJSONWriter()
        json.raw("{\"result\":[{\"IdUser\":")
        json.string(String(person.id))
        json.raw(",\"username\":")
        json.string(person.username)
        json.number("photos", person.photoCount)
        json.number("followers", counts.followers)
        json.number("following", counts.following)
        json.number("followed", counts.followedByViewer.map { $0 ? 1 : 0 })
        json.raw("}]}")
        return json.bytes
    }
}

/// `{"result":[{"id":…,"type":…,"IdUser":…,"username":…,"IdPhoto":…,"IdComment":…,"text":…,"created":…},…]}`:
/// `IdUser` and `username` are who did it; `IdPhoto` null for a follow,
/// `IdComment` and `text` null but for a mention.
public struct NotificationList: CommandOutput {
    public let notifications: [NotificationRecord]

    public var json: [UInt8] {
        var json = PHPJSONWriter(capacity: 140 * notifications.count + 16)
        json.raw("{\"result\":[")
        for (index, notification) in notifications.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"id\":")
            json.string(String(notification.id))
            json.text("type", notification.event.kind.rawValue)
            json.number("IdUser", notification.event.actor)
            json.raw(",\"username\":")
            json.string(notification.actorName)
            json.number("IdPhoto", notification.event.photoID)
            json.number("IdComment", notification.event.commentID)
            json.raw(",\"text\":")
            json.nullableString(notification.text)
            json.number("created", notification.created)
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }
}

/// `{"result":[{"channel":"/iReporter/live/notifications-…"}]}`: where the
/// signed-in user's notifications arrive live; `{"result":[]}` without a
/// live feed.
public struct LiveChannel: CommandOutput {
    public let path: String?

    public var json: [UInt8] {
        var json = PHPJSONWriter()
        json.raw("{\"result\":[")
        if let path {
            json.raw("{\"channel\":")
            json.string(path)
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }
}

/// `{"result":[{"IdApp":…,"name":…,"website":…,"scopes":…,"authorized":…,"last_used":…},…]}`:
/// `authorized_apps`, most recently authorized first.
public struct AuthorizedAppList: CommandOutput {
    public let apps: [AuthorizedApp]

    public var json: [UInt8] {
        var json = PHPJSONWriter()
        json.raw("{\"result\":[")
        for (index, app) in apps.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"IdApp\":")
            json.string(String(app.appID))
            json.raw(",\"name\":")
            json.string(app.name)
            json.raw(",\"website\":")
            json.nullableString(app.website.isEmpty ? nil : Array(app.website.utf8))
            json.raw(",\"scopes\":")
            json.string(app.scopes.description)
            json.number("authorized", app.authorized)
            json.number("last_used", app.lastUsed)
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }
}

extension PHPJSONWriter {
    /// `{"IdPhoto":…,"title":…,"IdUser":…,"username":…` (the object left open).
    mutating func photoFields(_ photo: PhotoRecord) {
        raw("{\"IdPhoto\":")
        string(String(photo.id))
        raw(",\"title\":")
        nullableString(photo.title)
        raw(",\"IdUser\":")
        string(String(photo.userID))
        raw(",\"username\":")
        nullableString(photo.username)
    }

    /// `,"name":"value"`, or `,"name":null`: a number as mysqli gave one.
    mutating func number(_ name: StaticString, _ value: Int64?) {
        raw(",\"")
        raw(name)
        raw("\":")
        if let value { string(String(value)) } else { raw("null") }
    }

    /// `,"name":"value"` (plain ASCII: a secret, a server), or null.
    mutating func text(_ name: StaticString, _ value: String?) {
        raw(",\"")
        raw(name)
        raw("\":")
        if let value { string(value) } else { raw("null") }
    }
}

/// `{"result":[{"timeline":"home","last_read_id":…,"version":…,"updated":…},…]}`:
/// read markers, numbers as strings as the ids are.
public struct ReadMarkerList: CommandOutput {
    public let markers: [ReadMarker]

    public var json: [UInt8] {
        var json = PHPJSONWriter()
        json.raw("{\"result\":[")
        for (index, marker) in markers.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"timeline\":")
            json.string(marker.timeline.rawValue)
            json.number("last_read_id", marker.lastReadID)
            json.number("version", marker.version)
            json.number("updated", marker.updated)
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }
}

/// `{"result":[{"effect":"sepia","summary":"…"},…]}`
public struct EffectList: CommandOutput {
    public let effects: [PhotoEffect]

    public var json: [UInt8] {
        var json = PHPJSONWriter()
        json.raw("{\"result\":[")
        for (index, effect) in effects.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"effect\":")
            json.string(effect.rawValue)
            json.raw(",\"summary\":")
            json.string(effect.summary)
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }
}

/// A rendered image (`preview`), answered as `image/jpeg`.
public struct JPEGImage: CommandOutput {
    public let jpeg: [UInt8]
    public var json: [UInt8] { jpeg }
    public var contentType: String { "image/jpeg" }
}

/// What a command answers, as `rpc.discover` describes its JSON-RPC result
/// (the form API's `{"result":X}` is X there; ids and numbers are strings,
/// as mysqli gave them).
public enum ResultShape: Sendable {
    /// `SignedIn`
    case signedIn
    /// `PhotoList`, or with `extras` `PhotoListWithExtras`
    case photos
    /// `Successful`
    case successful
    /// `NoContent`: null over JSON-RPC
    case nothing
    /// `VoteTally`
    case voteTally
    /// `CommentList`
    case comments
    /// `EffectList`
    case effects
    /// `JPEGImage` (a form command only)
    case jpeg
    /// `ExportArchive`, a zip (a form command only)
    case zip
    /// `FollowList`
    case follows
    /// `PersonSummary`
    case person
    /// `NotificationList`
    case notifications
    /// `LiveChannel`
    case channel
    /// `AuthorizedAppList`
    case authorizedApps
    /// `ReadMarkerList`
    case markers

    /// The media type of a result that is a file rather than JSON, which a
    /// JSON-RPC result cannot carry; nil for JSON.
    public var fileType: String? {
        switch self {
        case .jpeg: "image/jpeg"
        case .zip: "application/zip"
        case .signedIn, .photos, .successful, .nothing, .voteTally, .comments, .effects, .follows, .person, .notifications, .channel,
             .authorizedApps, .markers: nil
        }
    }

    /// The JSON Schema of the JSON-RPC result.
    public var schema: String {
        func list(_ properties: String, required: String) -> String {
            #"{"type":"array","items":{"type":"object","properties":{\#(properties)},"required":[\#(required)]}}"#
        }
        let id = #"{"type":"string","pattern":"^[0-9]+$"}"#
        let text = #"{"type":["string","null"]}"#
        let photo = #""IdPhoto":\#(id),"title":\#(text),"IdUser":\#(id),"username":\#(text)"#
        let photoKeys = #""IdPhoto","title","IdUser","username""#
        switch self {
        case .signedIn: return list(#""IdUser":\#(id),"username":\#(text)"#, required: #""IdUser","username""#)
        case .photos:
            let extras = StreamExtra.allCases.map { #",""# + $0.rawValue + #"":{"type":["string","null"]}"# }.joined()
            return list(photo + extras, required: photoKeys)
        case .successful: return #"{"type":"object","properties":{"successful":{"const":1}},"required":["successful"]}"#
        case .nothing: return #"{"type":"null"}"#
        case .voteTally:
            let counts = ["likes", "dislikes", "comments"].map { #",""# + $0 + #"":\#(id)"# }.joined()
            return list(#""IdPhoto":\#(id)"# + counts + #","myvote":{"enum":["1","-1","0"]}"#,
                        required: #""IdPhoto","likes","dislikes","comments","myvote""#)
        case .comments:
            return list(#""IdComment":\#(id),"IdPhoto":\#(id),"IdUser":\#(id),"username":\#(text),"text":{"type":"string"},"created":\#(id)"#,
                        required: #""IdComment","IdPhoto","IdUser","username","text","created""#)
        case .effects:
            return list(#""effect":{"enum":[\#(PhotoEffect.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ","))]},"summary":{"type":"string"}"#,
                        required: #""effect","summary""#)
        case .jpeg, .zip: return #"{"type":"string","contentMediaType":"\#(fileType!)"}"#
        case .follows:
            return list(#""IdFollow":\#(id),"IdUser":\#(id),"username":\#(text)"#, required: #""IdFollow","IdUser","username""#)
        case .person:
            let counts = ["photos", "followers", "following"].map { #",""# + $0 + #"":\#(id)"# }.joined()
            return list(#""IdUser":\#(id),"username":\#(text)"# + counts + #","followed":{"enum":["1","0",null]}"#,
                        required: #""IdUser","username","photos","followers","following","followed""#)
        case .notifications:
            let nullableID = #"{"type":["string","null"],"pattern":"^[0-9]+$"}"#
            let kinds = NotificationKind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
            return list(#""id":\#(id),"type":{"enum":[\#(kinds)]},"IdUser":\#(id),"username":\#(text),"IdPhoto":\#(nullableID),"#
                        + #""IdComment":\#(nullableID),"text":\#(text),"created":\#(id)"#,
                        required: #""id","type","IdUser","username","IdPhoto","IdComment","text","created""#)
        case .channel: return list(#""channel":{"type":"string"}"#, required: #""channel""#)
        case .authorizedApps:
            return list(#""IdApp":\#(id),"name":{"type":"string"},"website":\#(text),"scopes":{"type":"string"},"authorized":\#(id),"last_used":\#(id)"#,
                        required: #""IdApp","name","website","scopes","authorized","last_used""#)
        case .markers:
            let timelines = MarkerTimeline.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
            return list(#""timeline":{"enum":[\#(timelines)]},"last_read_id":\#(id),"version":\#(id),"updated":\#(id)"#,
                        required: #""timeline","last_read_id","version","updated""#)
        }
    }
}
