import Testing
@testable import IReporterKit

/// The Mastodon entities against the shapes docs.joinmastodon.org documents
/// (entities/Account, Status, MediaAttachment, Context): every documented
/// attribute a client reads is there with its JSON type, nothing else is,
/// and the values are ours (ids as strings, times with milliseconds, our
/// photo sizes' URLs).
struct MastodonEntityTests {
    let links = MastodonLinks(siteURL: "http://example.com/")
    let secret = PhotoSecret("9f2c61d0ab")!

    /// The documented attributes, with the JSON type of the example's value
    /// (`?`: null allowed). Optional attributes we leave out are listed apart.
    static let accountAttributes: [String: String] = [
        "id": "string", "username": "string", "acct": "string", "display_name": "string", "locked": "bool", "bot": "bool",
        "discoverable": "bool?", "indexable": "bool", "group": "bool", "noindex": "bool?", "hide_collections": "bool?",
        "created_at": "string", "note": "string", "url": "string",
        "uri": "string", "avatar": "string", "avatar_static": "string", "header": "string", "header_static": "string",
        "followers_count": "number", "following_count": "number", "statuses_count": "number", "last_status_at": "string?",
        "emojis": "array", "fields": "array", "roles": "array",
    ]
    static let mediaAttributes: [String: String] = [
        "id": "string", "type": "string", "url": "string?", "preview_url": "string?", "remote_url": "string?",
        "preview_remote_url": "string?", "text_url": "string?", "meta": "object", "description": "string?", "blurhash": "string?",
    ]
    static let statusAttributes: [String: String] = [
        "id": "string", "created_at": "string", "in_reply_to_id": "string?", "in_reply_to_account_id": "string?",
        "sensitive": "bool", "spoiler_text": "string", "visibility": "string", "language": "string?", "uri": "string",
        "url": "string?", "replies_count": "number", "reblogs_count": "number", "favourites_count": "number",
        "edited_at": "string?", "favourited": "bool", "reblogged": "bool", "muted": "bool", "bookmarked": "bool",
        "content": "string", "reblog": "object?", "account": "object", "media_attachments": "array", "mentions": "array",
        "tags": "array", "emojis": "array", "card": "object?", "poll": "object?",
    ]
    /// Sent by Mastodon to a signed-in viewer only.
    static let viewerAttributes: Set = ["favourited", "reblogged", "muted", "bookmarked"]

    func object(_ json: [UInt8]) throws -> [(String, JSONValue)] {
        guard case .object(let members) = try JSONParser.parse(json) else { Issue.record("not an object"); return [] }
        return members
    }

    func type(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "bool"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// `members` has exactly the documented attributes (less `absent`), each of its type.
    func expectShape(_ members: [(String, JSONValue)], _ documented: [String: String], absent: Set<String> = [],
                     sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Set(members.map(\.0)) == Set(documented.keys).subtracting(absent), sourceLocation: sourceLocation)
        #expect(members.count == Set(members.map(\.0)).count, "no attribute twice", sourceLocation: sourceLocation)
        for (name, value) in members {
            guard let expected = documented[name] else { continue }
            let actual = type(value)
            #expect(actual == expected || expected == actual + "?" || (actual == "null" && expected.hasSuffix("?")),
                    "\(name) is \(actual), documented \(expected)", sourceLocation: sourceLocation)
        }
    }

    func string(_ value: JSONValue?) -> String? {
        if case .string(let bytes)? = value { String(decoding: bytes, as: UTF8.self) } else { nil }
    }

    @Test func statusIDsOfCommentsNeverMeetPhotosAndSortAfterThem() {
        #expect(StatusID.photo(3).description == "3")
        #expect(StatusID.comment(42).description == "1000000000000042")
        #expect(StatusID("1000000000000042") == .comment(42))
        #expect(StatusID("3") == .photo(3))
        #expect(StatusID(StatusID.commentBase) == .photo(StatusID.commentBase), "the base itself is no comment")
        for bad in ["0", "", "-3", "3a", " 3", "9999999999999999999", "１"] { #expect(StatusID(bad) == nil, "\(bad)") }
        // IdPhoto is an int column: its largest value is below every comment's id.
        #expect(StatusID.photo(Int64(Int32.max)).value < StatusID.comment(1).value)
        #expect(StatusID.comment(1).value < StatusID.comment(2).value)
        #expect(StatusID.comment(8_000_000_000_000_000 - StatusID.commentBase).value <= 1 << 53, "exact in JavaScript")
    }

    @Test func timesAreISO8601WithMilliseconds() {
        #expect(MastodonTime.iso8601(0) == "1970-01-01T00:00:00.000Z")
        #expect(MastodonTime.iso8601(1_764_590_000) == "2025-12-01T11:53:20.000Z")
        #expect(MastodonTime.day(of: 1_764_590_000) == 1_764_547_200)
        #expect(MastodonTime.iso8601(MastodonTime.day(of: 1_764_590_000)) == "2025-12-01T00:00:00.000Z")
    }

    @Test func contentIsEscapedHTMLInParagraphs() {
        #expect(StatusContent.html(Array("Sunset".utf8)) == "<p>Sunset</p>")
        #expect(StatusContent.html(Array(#"a<b & "c" 'd'>"#.utf8)) == "<p>a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;</p>")
        #expect(StatusContent.html(Array("one\ntwo\n\nthree\n\n\nfour".utf8)) == "<p>one<br />two</p><p>three</p><p>four</p>")
        #expect(StatusContent.html([]) == "")
        #expect(StatusContent.html([0x61, 0xFF]) == "<p>aÿ</p>", "a title the PHP version stored as latin1 bytes (StoredText)")
    }

    @Test func anAccountHasMastodonsAttributes() throws {
        let account = AccountEntity(person: PersonRecord(id: 7, username: Array("alice".utf8), photoCount: 12, firstUpload: 1_764_590_000,
                                                         lastUpload: 1_796_536_700),
                                    followersCount: 3, followingCount: 4)
        let members = try object(account.json(links: links))
        expectShape(members, Self.accountAttributes)
        let value = JSONValue.object(members)
        #expect(string(value["id"]) == "7")
        #expect(string(value["acct"]) == "alice")
        #expect(string(value["created_at"]) == "2025-12-01T00:00:00.000Z")
        #expect(string(value["last_status_at"]) == "2026-12-06", "a day, as Mastodon gives it")
        #expect(string(value["url"]) == "http://example.com/#/user/7")
        #expect(string(value["avatar"]) == "http://example.com/assets/2/avatar.png")
        #expect(value["statuses_count"] == .number(Array("12".utf8)))
        #expect(value["followers_count"] == .number(Array("3".utf8)))
        #expect(value["following_count"] == .number(Array("4".utf8)))
        #expect(value["source"] == nil)

        let own = JSONValue.object(try object(account.json(links: links, withSource: true)))
        guard case .object(let source)? = own["source"] else { Issue.record("no source"); return }
        expectShape(source, ["privacy": "string", "sensitive": "bool", "language": "string?", "note": "string", "fields": "array",
                             "follow_requests_count": "number"])
        #expect(string(JSONValue.object(source)["privacy"]) == "public")
    }

    /// Registered, with or without photos since: that day (the earlier of
    /// the two, for an account whose photos the PHP version dated).
    @Test func anAccountWasCreatedWhenItRegistered() throws {
        for (firstUpload, day) in [(nil, "2025-12-01T00:00:00.000Z"), (1_796_536_700, "2025-12-01T00:00:00.000Z"),
                                   (1_700_000_000, "2023-11-14T00:00:00.000Z")] as [(Int64?, String)] {
            let person = PersonRecord(id: 7, username: Array("new".utf8), photoCount: 0, firstUpload: firstUpload,
                                      registered: 1_764_590_000)
            #expect(string(JSONValue.object(try object(AccountEntity(person: person).json(links: links)))["created_at"]) == day)
        }
    }

    @Test func aGoneAccountStillHasAName() throws {
        let value = JSONValue.object(try object(AccountEntity(id: 9, username: nil).json(links: links)))
        #expect(string(value["username"]) == "#9")
        #expect(string(value["created_at"]) == "1970-01-01T00:00:00.000Z")
    }

    @Test func aPhotosAttachmentPointsAtItsSizes() throws {
        let media = MediaAttachmentEntity(id: 42, source: .photo(id: 42, secret: secret), width: 1600, height: 1200,
                                          description: Array("A dog on a beach".utf8))
        let members = try object(media.json(links: links))
        expectShape(members, Self.mediaAttributes)
        let value = JSONValue.object(members)
        #expect(string(value["id"]) == "42")
        #expect(string(value["type"]) == "image")
        #expect(string(value["url"]) == "http://example.com/iReporter/photos/000000/42_9f2c61d0ab_o.jpg")
        #expect(string(value["preview_url"]) == "http://example.com/iReporter/photos/000000/42_9f2c61d0ab_z.jpg")
        #expect(string(value["description"]) == "A dog on a beach")
        #expect(value["blurhash"] == .null)
        guard case .object(let meta)? = value["meta"], case .object(let original)? = JSONValue.object(meta)["original"],
              case .object(let small)? = JSONValue.object(meta)["small"] else { Issue.record("no meta"); return }
        expectShape(original, ["width": "number", "height": "number", "size": "string", "aspect": "number"])
        #expect(JSONValue.object(original)["size"] == .string(Array("1600x1200".utf8)))
        #expect(JSONValue.object(original)["aspect"] == .number(Array("1.3333333333333333".utf8)))
        #expect(JSONValue.object(small)["size"] == .string(Array("640x480".utf8)))
    }

    @Test func attachmentsWithoutSecretsDetailsOrURLs() throws {
        let old = JSONValue.object(try object(MediaAttachmentEntity(id: 5, source: .photo(id: 5, secret: nil), width: nil, height: nil,
                                                                    description: nil).json(links: links)))
        #expect(string(old["url"]) == "http://example.com/iReporter/upload/5.jpg", "before migration 006: the 2012 names")
        #expect(string(old["preview_url"]) == "http://example.com/iReporter/upload/5-thumb.jpg")
        #expect(old["meta"] == .object([]), "before migration 003: no size known")
        #expect(old["description"] == .null)

        let pending = MediaAttachmentEntity(id: 8, source: .pending(key: "0123456789abcdef"), width: 64, height: 48, description: nil, focus: (x: 0.5, y: -0.25))
        let members = try object(pending.json(links: links))
        expectShape(members, Self.mediaAttributes)
        let value = JSONValue.object(members)
        #expect(string(value["url"]) == "http://example.com/api/v1/media/8/0123456789abcdef.jpg")
        #expect(string(value["preview_url"]) == string(value["url"]))
        guard case .object(let meta)? = value["meta"] else { Issue.record("no meta"); return }
        #expect(JSONValue.object(meta)["focus"] == .object([("x", .number(Array("0.5".utf8))), ("y", .number(Array("-0.25".utf8)))]))
    }

    func photoStatus(viewer: Bool, myVote: Vote? = .like) -> StatusEntity {
        var extras = PhotoExtras(likes: 5, dislikes: 1, comments: 2, myVote: myVote,
                                 details: PhotoDetails(created: 1_764_590_000, width: 64, height: 48))
        extras.secret = secret
        return StatusEntity(photo: PhotoRecord(id: 42, title: Array("Sunset & sea".utf8), userID: 7, username: Array("alice".utf8)),
                            extras: extras, account: AccountEntity(id: 7, username: Array("alice".utf8), statusesCount: 1),
                            description: Array("alt".utf8), viewer: viewer)
    }

    /// The pages' URLs read back (what apps search for to open a link in place).
    @Test func aPageURLOfThisSiteNamesWhatItShows() {
        #expect(links.target(of: "http://example.com/#/photo/42") == .photo(42))
        #expect(links.target(of: " HTTPS://Example.COM/#/photo/42\n") == .photo(42), "either scheme, the host in any case")
        #expect(links.target(of: "http://example.com/#/photo/42/1000000000000007") == .comment(7, photoID: 42))
        #expect(links.target(of: "http://example.com/#/user/7") == .account(7))
        for other in ["http://example.com.evil/#/photo/42", "http://other.org/#/photo/42", "example.com/#/photo/42",
                      "http://example.com/#/photo/", "http://example.com/#/photo/4x", "http://example.com/#/photo/0",
                      "http://example.com/#/photo/42/43", "http://example.com/#/photo/42/", "http://example.com/#/user/7/8",
                      "http://example.com/#/user/1000000000000007", "http://example.com/photo/42", "http://example.com/",
                      "sunset"] {
            #expect(links.target(of: other) == nil, "\(other)")
        }
        let below = MastodonLinks(siteURL: "https://example.com/photos/")
        #expect(below.target(of: "https://example.com/photos/#/photo/3") == .photo(3))
        #expect(below.target(of: "https://example.com/#/photo/3") == nil, "another site's root")
    }

    @Test func aPhotoIsAStatusWithOneAttachment() throws {
        let members = try object(photoStatus(viewer: true).json(links: links))
        expectShape(members, Self.statusAttributes)
        let value = JSONValue.object(members)
        #expect(string(value["id"]) == "42")
        #expect(string(value["created_at"]) == "2025-12-01T11:53:20.000Z")
        #expect(string(value["content"]) == "<p>Sunset &amp; sea</p>")
        #expect(string(value["visibility"]) == "public")
        #expect(string(value["url"]) == "http://example.com/#/photo/42")
        #expect(value["in_reply_to_id"] == .null)
        #expect(value["favourites_count"] == .number(Array("5".utf8)), "likes; dislikes are not Mastodon's")
        #expect(value["replies_count"] == .number(Array("2".utf8)))
        #expect(value["favourited"] == .bool(true))
        guard case .array(let media)? = value["media_attachments"], media.count == 1, case .object(let attachment) = media[0],
              case .object(let account)? = value["account"] else { Issue.record("no attachment or account"); return }
        expectShape(attachment, Self.mediaAttributes)
        expectShape(account, Self.accountAttributes)
        #expect(string(JSONValue.object(attachment)["description"]) == "alt")

        #expect(JSONValue.object(try object(photoStatus(viewer: true, myVote: .dislike).json(links: links)))["favourited"] == .bool(false))
        expectShape(try object(photoStatus(viewer: false).json(links: links)), Self.statusAttributes, absent: Self.viewerAttributes)
    }

    @Test func aCommentIsAReplyToItsPhoto() throws {
        let comment = CommentRecord(id: 3, photoID: 42, userID: 8, username: Array("bob".utf8), text: Array("Nice!\n<3".utf8),
                                    created: 1_764_590_060)
        let members = try object(StatusEntity(comment: comment, photoOwner: 7, viewer: false).json(links: links))
        expectShape(members, Self.statusAttributes, absent: Self.viewerAttributes)
        let value = JSONValue.object(members)
        #expect(string(value["id"]) == "1000000000000003")
        #expect(string(value["in_reply_to_id"]) == "42")
        #expect(string(value["in_reply_to_account_id"]) == "7")
        #expect(string(value["content"]) == "<p>Nice!<br />&lt;3</p>")
        #expect(string(value["url"]) == "http://example.com/#/photo/42")
        #expect(string(value["uri"]) == "http://example.com/#/photo/42/1000000000000003", "unique, unlike the url")
        #expect(value["media_attachments"] == .array([]))
        #expect(string(JSONValue.object(members)["account"]?["acct"]) == "bob")
    }

    @Test func aContextHasAncestorsAndDescendants() throws {
        let comment = StatusEntity(comment: CommentRecord(id: 3, photoID: 42, userID: 8, username: Array("bob".utf8), text: Array("x".utf8),
                                                          created: 1), photoOwner: 7, viewer: false)
        let members = try object(ContextEntity(ancestors: [], descendants: [comment]).json(links: links))
        #expect(members.map(\.0) == ["ancestors", "descendants"])
        guard case .array(let descendants)? = JSONValue.object(members)["descendants"], case .object(let status) = descendants.first
        else { Issue.record("no descendants"); return }
        expectShape(status, Self.statusAttributes, absent: Self.viewerAttributes)
        #expect(JSONValue.object(members)["ancestors"] == .array([]))
    }

    @Test func aListOfKeptRenderingsReadsAsOneWrittenAfresh() {
        func written(_ statuses: [StatusEntity], links: MastodonLinks) -> [UInt8] {
            var json = PHPJSONWriter()
            StatusEntity.writeList(statuses, into: &json, links: links)
            return json.bytes
        }
        let comment = StatusEntity(comment: CommentRecord(id: 3, photoID: 42, userID: 8, username: Array("bob".utf8), text: Array("x".utf8),
                                                          created: 1), photoOwner: 7, viewer: true)
        let rendered = RenderedStatuses(capacity: 2)
        let page = [photoStatus(viewer: true), comment]
        #expect(rendered.list([], links: links) == Array("[]".utf8))
        #expect(rendered.list(page, links: links) == written(page, links: links))
        #expect(rendered.list(page, links: links) == written(page, links: links), "from what was kept")
        // What differs in anything shown is rendered anew: the viewer's vote,
        // another site address, and past the capacity.
        let disliked = [photoStatus(viewer: true, myVote: .dislike), comment]
        #expect(rendered.list(disliked, links: links) == written(disliked, links: links))
        let elsewhere = MastodonLinks(siteURL: "https://photos.example.org/")
        #expect(rendered.list(page, links: elsewhere) == written(page, links: elsewhere))
        #expect(rendered.list([photoStatus(viewer: false)] + page, links: links) == written([photoStatus(viewer: false)] + page, links: links))
    }

    @Test func theStreamsRowsReadBackAsRendered() throws {
        var withSecret = PhotoExtras(likes: 2, dislikes: 1, comments: 4, myVote: .like, details: PhotoDetails(created: 99, width: 10, height: 20))
        withSecret.secret = secret
        let rows: [(photo: PhotoRecord, extras: PhotoExtras)] = [
            (PhotoRecord(id: 9, title: Array("é/\"x\"".utf8), userID: 2, username: Array("ünï".utf8)), withSecret),
            (PhotoRecord(id: 8, title: nil, userID: 3, username: nil), PhotoExtras(myVote: .dislike)),
        ]
        var form = FormData()
        form.setField(Array("extras".utf8), Array(StreamRows.extras.utf8))
        let fields: [StreamExtra] = try CommandParameter.extras().list(form)
        let rendered = PhotoListWithExtras(photos: rows, fields: fields, hasViewer: true).json
        let decoded = try StreamRows.decode(rendered)
        #expect(decoded.map(\.photo) == rows.map(\.photo))
        #expect(decoded.map(\.extras) == rows.map { photo, extras in
            var shown = extras
            shown.dislikes = 0 // not among the extras asked for
            return shown
        })
        #expect(throws: StreamRows.Malformed.self) { try StreamRows.decode(Array(#"{"error":"Photo stream is broken"}"#.utf8)) }
    }
}
