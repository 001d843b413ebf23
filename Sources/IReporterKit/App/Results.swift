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
            json.raw("{\"IdPhoto\":")
            json.string(String(photo.id))
            json.raw(",\"title\":")
            json.nullableString(photo.title)
            json.raw(",\"IdUser\":")
            json.string(String(photo.userID))
            json.raw(",\"username\":")
            json.nullableString(photo.username)
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

/// The empty body the original gave for logout.
public struct NoContent: CommandOutput {
    public var json: [UInt8] { [] }
}
