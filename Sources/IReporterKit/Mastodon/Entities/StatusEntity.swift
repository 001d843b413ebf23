/// Mastodon's Status: a photo (its title the content, the photo its one
/// media attachment, its likes the favourites, its comments the replies)
/// or a comment (a reply to its photo's status, without media). Always
/// public; nothing we lack (boosts, polls, cards, mentions, tags, edits)
/// is more than its empty value.
public struct StatusEntity: Sendable, Equatable {
    public let id: StatusID
    /// Unix seconds; nil for a photo from before migration 003 (then the epoch).
    public let created: Int64?
    /// The photo a comment replies to, and its author.
    public let inReplyTo: (photoID: Int64, accountID: Int64)?
    /// The title or comment as stored (plain text).
    public let text: [UInt8]
    public let account: AccountEntity
    public var media: MediaAttachmentEntity?
    public let repliesCount: Int64
    public let favouritesCount: Int64
    /// The viewer's like; nil without a viewer (Mastodon then leaves the
    /// viewer's fields out).
    public let favourited: Bool?
    /// The photo whose page shows the status.
    public let photoID: Int64

    public static func == (a: Self, b: Self) -> Bool {
        a.id == b.id && a.created == b.created && a.inReplyTo?.photoID == b.inReplyTo?.photoID
            && a.inReplyTo?.accountID == b.inReplyTo?.accountID && a.text == b.text && a.account == b.account && a.media == b.media
            && a.repliesCount == b.repliesCount && a.favouritesCount == b.favouritesCount && a.favourited == b.favourited
    }

    /// A photo as `stream` answers it with extras (`StreamRows.extras`);
    /// `viewer`: whether a user asked (then `myvote` is theirs).
    public init(photo: PhotoRecord, extras: PhotoExtras, account: AccountEntity, description: [UInt8]?, viewer: Bool) {
        id = .photo(photo.id)
        created = extras.details?.created
        inReplyTo = nil
        text = photo.title ?? []
        self.account = account
        media = MediaAttachmentEntity(id: photo.id, source: .photo(id: photo.id, secret: extras.secret),
                                      width: extras.details?.width, height: extras.details?.height, description: description)
        repliesCount = extras.comments
        favouritesCount = extras.likes
        favourited = viewer ? extras.myVote == .like : nil
        photoID = photo.id
    }

    /// A comment as `comments` and `comment` answer it, on a photo of `photoOwner`.
    public init(comment: CommentRecord, photoOwner: Int64, viewer: Bool) {
        id = .comment(comment.id)
        created = comment.created
        inReplyTo = (comment.photoID, photoOwner)
        text = comment.text
        account = AccountEntity(id: comment.userID, username: comment.username)
        media = nil
        repliesCount = 0
        favouritesCount = 0
        favourited = viewer ? false : nil
        photoID = comment.photoID
    }

    /// `source`: with its `text` too, as a deleted status is answered (the
    /// client's "delete & re-draft" fills its composer from it).
    public func write(into json: inout PHPJSONWriter, links: MastodonLinks, source: Bool = false) {
        json.raw("{")
        json.member("id", id.description)
        json.member("created_at", time: created ?? 0)
        json.member("in_reply_to_id", inReplyTo.map { StatusID.photo($0.photoID).description })
        json.member("in_reply_to_account_id", id: inReplyTo?.accountID)
        json.member("sensitive", false)
        json.member("spoiler_text", "")
        json.member("visibility", "public")
        json.member("language", nil)
        let page = links.photoPage(photoID)
        json.member("uri", id == .photo(photoID) ? page : "\(page)/\(id)")
        json.member("url", page)
        json.member("replies_count", repliesCount)
        json.member("reblogs_count", 0)
        json.member("favourites_count", favouritesCount)
        json.member("edited_at", nil)
        if let favourited {
            json.member("favourited", favourited)
            json.member("reblogged", false)
            json.member("muted", false)
            json.member("bookmarked", false)
        }
        json.member("content", StatusContent.html(text))
        if source { json.member("text", text: text) }
        json.member("reblog", nil)
        json.name("account")
        account.write(into: &json, links: links)
        json.name("media_attachments")
        json.raw("[")
        media?.write(into: &json, links: links)
        json.raw("]")
        json.emptyList("mentions")
        json.emptyList("tags")
        json.emptyList("emojis")
        json.member("card", nil)
        json.member("poll", nil)
        json.raw("}")
    }

    public func json(links: MastodonLinks, source: Bool = false) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 1800)
        write(into: &json, links: links, source: source)
        return json.bytes
    }

    /// `[status,…]`; with `kept`, each status copied from (or written into) it.
    static func writeList(_ statuses: [StatusEntity], into json: inout PHPJSONWriter, links: MastodonLinks,
                          kept: RenderedStatuses? = nil) {
        json.raw("[")
        for (index, status) in statuses.enumerated() {
            if index > 0 { json.raw(",") }
            if let kept { json.raw(json: kept.rendering(of: status, links: links)) } else { status.write(into: &json, links: links) }
        }
        json.raw("]")
    }
}

/// Mastodon's Context: a photo's status has no ancestors and its comments,
/// oldest first, as descendants; a comment's status has its photo as the
/// one ancestor and no descendants (a comment is never replied to).
public struct ContextEntity: Sendable {
    public let ancestors: [StatusEntity]
    public let descendants: [StatusEntity]

    public init(ancestors: [StatusEntity], descendants: [StatusEntity]) {
        self.ancestors = ancestors
        self.descendants = descendants
    }

    public func json(links: MastodonLinks) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 1800 * (ancestors.count + descendants.count) + 40)
        json.raw("{\"ancestors\":")
        StatusEntity.writeList(ancestors, into: &json, links: links)
        json.raw(",\"descendants\":")
        StatusEntity.writeList(descendants, into: &json, links: links)
        json.raw("}")
        return json.bytes
    }
}

/// `[account,…]` (`favourited_by`, a search's accounts).
public enum AccountList {
    public static func json(_ accounts: [AccountEntity], links: MastodonLinks) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 700 * accounts.count + 2)
        json.raw("[")
        for (index, account) in accounts.enumerated() {
            if index > 0 { json.raw(",") }
            account.write(into: &json, links: links)
        }
        json.raw("]")
        return json.bytes
    }
}
