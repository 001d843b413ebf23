/// Mastodon's MediaAttachment: a photo's (its `url` the original size as
/// stored, metadata stripped; `preview_url` the 640 size), or an upload
/// not yet posted (`url` and `preview_url` null, as Mastodon's for media
/// still processing: the photo has no URL until a status publishes it).
/// `description` is the alt text; no blurhash is computed.
public struct MediaAttachmentEntity: Sendable, Equatable {
    /// What the attachment shows.
    public enum Source: Sendable, Equatable {
        /// A published photo (nil secret: a database without migration 006).
        case photo(id: Int64, secret: PhotoSecret?)
        /// An upload waiting for its status.
        case pending
    }

    public static let previewSize = PhotoSize.medium640

    /// The attachment's id: a photo's IdPhoto, a pending upload's own id.
    public let id: Int64
    public let source: Source
    /// The photo's size as displayed; nil for a photo from before migration 003.
    public let width: Int?
    public let height: Int?
    public let description: [UInt8]?
    /// Mastodon's focal point, each from -1 to 1; nil: none set.
    public let focus: (x: Double, y: Double)?

    public init(id: Int64, source: Source, width: Int?, height: Int?, description: [UInt8]?, focus: (x: Double, y: Double)? = nil) {
        self.id = id
        self.source = source
        self.width = width
        self.height = height
        self.description = description
        self.focus = focus
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.id == b.id && a.source == b.source && a.width == b.width && a.height == b.height && a.description == b.description
            && a.focus?.x == b.focus?.x && a.focus?.y == b.focus?.y
    }

    public func write(into json: inout PHPJSONWriter, links: MastodonLinks) {
        json.raw("{")
        json.member("id", id: id)
        json.member("type", "image")
        switch source {
        case .photo(let photoID, let secret):
            json.member("url", links.photo(photoID, secret: secret, size: .original))
            json.member("preview_url", links.photo(photoID, secret: secret, size: Self.previewSize))
        case .pending:
            json.member("url", nil)
            json.member("preview_url", nil)
        }
        json.member("remote_url", nil)
        json.member("preview_remote_url", nil)
        json.member("text_url", nil)
        json.name("meta")
        json.raw("{")
        if let width, let height, width > 0, height > 0 {
            Self.writeImage("original", width, height, into: &json)
            let preview = Self.previewSize.dimensions(ofPhoto: width, height)
            Self.writeImage("small", preview.width, preview.height, into: &json)
        }
        if let focus {
            json.name("focus")
            json.raw(json: "{\"x\":\(focus.x),\"y\":\(focus.y)}")
        }
        json.raw("}")
        json.name("description")
        if let description { json.string(String(decoding: description, as: UTF8.self)) } else { json.raw("null") }
        json.member("blurhash", nil)
        json.raw("}")
    }

    /// `"original":{"width":…,"height":…,"size":"WxH","aspect":W/H}`
    private static func writeImage(_ name: StaticString, _ width: Int, _ height: Int, into json: inout PHPJSONWriter) {
        json.name(name)
        json.raw("{")
        json.member("width", Int64(width))
        json.member("height", Int64(height))
        json.member("size", "\(width)x\(height)")
        json.name("aspect")
        json.raw(json: String(Double(width) / Double(height)))
        json.raw("}")
    }

    public func json(links: MastodonLinks) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 600)
        write(into: &json, links: links)
        return json.bytes
    }
}
