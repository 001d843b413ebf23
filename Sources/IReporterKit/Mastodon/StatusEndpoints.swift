/// `/api/v1/statuses`: a status is a photo (posted with its one media
/// attachment, the caption its title, through `upload`) or a comment (a
/// reply to a photo's status, through `comment`); deleted through `delete`
/// or `uncomment`, favourited through `like` and `unvote` (one's
/// favourites are `liked`). What a Mastodon
/// server has and we do not (boosts, bookmarks, pins, mutes, edits, polls,
/// scheduled posts) answers as Pixelfed does: docs/API.md lists it.
struct StatusEndpoints: MastodonEndpoints {
    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        router.add(.post, "/api/v1/statuses", scope: OAuthScope("write:statuses")) { call in
            try post(call, api: api)
        }
        router.add(.get, "/api/v1/statuses/:id", ifTokenSent: .readStatuses) { call in
            let statuses = MastodonStatuses(call, api: api)
            return statuses.answer(try statuses.status(of: call))
        }
        router.add(.delete, "/api/v1/statuses/:id", scope: OAuthScope("write:statuses")) { call in
            let user = try call.user()
            let statuses = MastodonStatuses(call, api: api)
            var status = try statuses.status(of: call)
            switch status.id {
            case .photo(let id):
                // As Mastodon, which looks the status up among the caller's own.
                guard status.account.id == user.id else { throw MastodonError.notFound }
                defer { statuses.context.removeTemporaryFiles() }
                // "Delete & re-draft": the app posts the answer's media again.
                let copy = call.parameters.bool("delete_media") == true ? nil
                    : status.media.flatMap { MediaEndpoints.redraftCopy(of: $0, userID: user.id, services: api.services,
                                                                         context: statuses.context) }
                do {
                    _ = try statuses.run("delete", ["IdPhoto": String(id)])
                } catch {
                    if let copy { MediaEndpoints.forget(copy, services: api.services) }
                    throw error
                }
                if let copy { status.media = copy }
            case .comment(let id):
                // As for a photo: another's status is not found, as Mastodon
                // answers (uncomment's own refusal would be a 403).
                do {
                    _ = try statuses.run("uncomment", ["IdComment": String(id)])
                } catch let error as MastodonError where error.status == 403 {
                    throw MastodonError.notFound
                }
            }
            return .json(status.json(links: statuses.links, source: true))
        }
        router.add(.get, "/api/v1/statuses/:id/context", ifTokenSent: .readStatuses) { call in
            let statuses = MastodonStatuses(call, api: api)
            let status = try statuses.status(of: call)
            let context = switch status.id {
            case .photo: ContextEntity(ancestors: [], descendants: try statuses.replies(to: status))
            case .comment: ContextEntity(ancestors: try statuses.photo(status.photoID).map { [$0] } ?? [], descendants: [])
            }
            return .json(context.json(links: statuses.links))
        }
        router.add(.post, "/api/v1/statuses/:id/favourite", scope: OAuthScope("write:favourites")) { call in
            try vote(call, api: api, like: true)
        }
        router.add(.post, "/api/v1/statuses/:id/unfavourite", scope: OAuthScope("write:favourites")) { call in
            try vote(call, api: api, like: false)
        }
        router.add(.get, "/api/v1/statuses/:id/favourited_by", ifTokenSent: .readAccounts) { call in
            let statuses = MastodonStatuses(call, api: api)
            let status = try statuses.status(of: call)
            guard case .photo(let id) = status.id else { return .emptyList }
            // Paged by the likers' ids, the `Link` header as Mastodon sends it.
            let page = try TimelinePage(call.parameters, limits: .accounts)
            let likers = try api.services.votes.likers(of: id, page: page.pageCursor)
            let accounts = try AccountEndpoints.accounts(likers.map { ($0.userID, $0.username) }, statuses: statuses)
            var answer = MastodonAnswer.json(AccountList.json(accounts, links: statuses.links))
            if let link = page.link(siteURL: call.request.siteURL, path: call.request.path, ids: likers.map(\.userID)) {
                answer.headers.append(link)
            }
            return answer
        }
        // One's favourites: `liked`, paged by photo (a vote keeps no time).
        router.add(.get, "/api/v1/favourites", scope: OAuthScope("read:favourites")) { call in
            _ = try call.user()
            let statuses = MastodonStatuses(call, api: api)
            let page = try TimelinePage(call.parameters)
            return statuses.page(statuses.statuses(try statuses.photoRows("liked", page.cursor([:]))), page)
        }
        router.add(.get, "/api/v1/statuses/:id/reblogged_by", ifTokenSent: .readAccounts) { call in
            _ = try MastodonStatuses(call, api: api).status(of: call)
            return .emptyList
        }
        router.add(.get, "/api/v1/statuses/:id/source", scope: OAuthScope("read:statuses")) { call in
            let status = try MastodonStatuses(call, api: api).status(of: call)
            var json = PHPJSONWriter()
            json.raw("{")
            json.member("id", status.id.description)
            json.member("text", text: status.text)
            json.member("spoiler_text", "")
            json.raw("}")
            return .json(json.bytes)
        }
        router.add(.get, "/api/v1/statuses/:id/history", ifTokenSent: .readStatuses) { call in
            _ = try MastodonStatuses(call, api: api).status(of: call)
            return .emptyList
        }
        for (action, scope, what) in Self.refused {
            router.add(.post, "/api/v1/statuses/:id/\(action)", scope: OAuthScope(scope)) { call in
                _ = try MastodonStatuses(call, api: api).status(of: call)
                throw MastodonError(status: 422, message: "\(what) not supported by this server")
            }
        }
        router.add(.put, "/api/v1/statuses/:id", scope: OAuthScope("write:statuses")) { call in
            _ = try MastodonStatuses(call, api: api).status(of: call)
            throw MastodonError(status: 422, message: "Editing a post is not supported by this server")
        }
    }

    /// What a status cannot have done to it here (Pixelfed's answer: 422).
    static let refused: [(action: String, scope: String, what: String)] = [
        ("reblog", "write:statuses", "Boosts are"), ("unreblog", "write:statuses", "Boosts are"),
        ("bookmark", "write:bookmarks", "Bookmarks are"), ("unbookmark", "write:bookmarks", "Bookmarks are"),
        ("pin", "write:accounts", "Pinned posts are"), ("unpin", "write:accounts", "Pinned posts are"),
        ("mute", "write:mutes", "Muting conversations is"), ("unmute", "write:mutes", "Muting conversations is"),
    ]

    /// A photo (one media attachment) or a reply to one; text alone is
    /// refused, as Pixelfed refuses it.
    private func post(_ call: MastodonCall, api: MastodonAPI) throws -> MastodonAnswer {
        let user = try call.user()
        let parameters = call.parameters
        if parameters.bytes("poll[expires_in]") != nil || !parameters.strings("poll[options]").isEmpty {
            throw MastodonError(status: 422, message: "Polls are not supported by this server")
        }
        // Published unmarked, they would show what the person asked to hide.
        if parameters.bool("sensitive") == true || !(parameters.bytes("spoiler_text") ?? []).isEmpty {
            throw MastodonError(status: 422, message: "Sensitive posts and content warnings are not supported by this server")
        }
        if parameters.bytes("scheduled_at") != nil {
            throw MastodonError(status: 422, message: "Scheduled posts are not supported by this server")
        }
        if let visibility = parameters.string("visibility"), !["public", "unlisted"].contains(visibility) {
            throw MastodonError(status: 422, message: "Every post here is public: visibility \(visibility) is not supported")
        }
        let statuses = MastodonStatuses(call, api: api)
        let key = PostIdempotencyKey(call.request, userID: user.id, store: statuses.services.media, now: statuses.services.now())
        switch try key?.claim() {
        case .posted(let posted)?:
            guard let id = StatusID(posted), let status = try statuses.status(id) else { throw MastodonError.notFound }
            return statuses.answer(status)
        case .underWay?:
            // The draft standard's answer: the first is still being made, its status comes to the next try.
            throw MastodonError(status: 409, message: "A post with this Idempotency-Key is on its way: try again in a moment")
        case .claimed?, .notKept?, nil:
            break
        }
        let stored: (id: StatusID, status: StatusEntity?)
        do {
            stored = try storeStatus(call, user: user, statuses: statuses)
        } catch {
            key?.release()
            throw error
        }
        // Stored: a retry with the key gets this status, also when reading
        // it back fails below (released, the retry found its media used and
        // was refused, and the person posted the photo again).
        key?.remember(stored.id)
        guard let status = try stored.status ?? statuses.status(stored.id) else { throw MastodonError.notFound }
        return statuses.answer(status)
    }

    /// The post's photo or comment, stored: its id, and its status when
    /// storing it gave that (a comment's).
    private func storeStatus(_ call: MastodonCall, user: SignedInUser,
                             statuses: MastodonStatuses) throws -> (id: StatusID, status: StatusEntity?) {
        let parameters = call.parameters
        let text = parameters.bytes("status") ?? []
        // Blank values are none, as Mastodon reads them (a form's empty `media_ids[]=`).
        let mediaIDs = parameters.strings("media_ids").filter { !$0.isEmpty }
        if let reply = parameters.string("in_reply_to_id"), !reply.isEmpty {
            guard mediaIDs.isEmpty else { throw MastodonError(status: 422, message: "A reply is a comment: it cannot carry a photo") }
            guard let id = StatusID(reply), let target = try statuses.status(id),
                  let photo = try statuses.photo(target.photoID) else { throw MastodonError.notFound }
            let domain = InstanceEndpoints.domain(call.request.siteURL)
            let text = Self.withoutLeadingMentions(text, of: [target.account, photo.account].compactMap(\.username), domain: domain)
            // A reply to a comment is one more comment on its photo.
            let output = try statuses.run("comment", CommandArguments(fields: ["IdPhoto": Array(String(target.photoID).utf8), "text": text]))
            guard let comment = (output as? CommentList)?.comments.first else { throw MastodonError.notFound }
            let status = StatusEntity(comment: comment, photoOwner: photo.account.id, viewer: true)
            return (status.id, status)
        }
        guard !mediaIDs.isEmpty else {
            throw MastodonError(status: 422, message: "Validation failed: a post needs a photo (text alone is not supported by this server)")
        }
        guard mediaIDs.count == 1 else { throw MastodonError(status: 422, message: "Validation failed: a post carries exactly one photo") }
        let photoID = try MediaEndpoints.publish(mediaID: mediaIDs[0], title: try Self.title(text), as: user, statuses: statuses)
        return (.photo(photoID), nil)
    }

    /// A reply's text without the mentions of the people replied to that
    /// apps put before it (`@alice `, `@alice@host `): a comment goes to
    /// the photo's thread anyway, and the 2012 app and the web client would
    /// show them as typed text. Mentions of anyone else, and any later in
    /// the text, stay.
    static func withoutLeadingMentions(_ text: [UInt8], of usernames: [[UInt8]], domain: String) -> [UInt8] {
        let accts = usernames.flatMap { [$0 + Array("@\(domain)".utf8), $0] }.sorted { $0.count > $1.count }
        var rest = text[...]
        while rest.first == UInt8(ascii: "@"),
              let acct = accts.first(where: { acct in
                  rest.dropFirst().starts(with: acct)
                      && (rest.count == acct.count + 1 || [0x20, 0x0A].contains(rest[rest.startIndex + acct.count + 1]))
              }) {
            rest = rest.dropFirst(acct.count + 1).drop { $0 == 0x20 || $0 == 0x0A }
        }
        return Array(rest)
    }

    /// A caption as the photo's title: one line (a client's line breaks as
    /// spaces; `upload` refuses control characters), and refused rather than
    /// cut when over the title's bytes (`upload` cuts, as the 2012 app's did).
    static func title(_ caption: [UInt8]) throws(MastodonError) -> [UInt8] {
        var title: [UInt8] = []
        for (index, byte) in caption.enumerated() where !(byte == 0x0A && index > 0 && caption[index - 1] == 0x0D) {
            title.append(byte == 0x0A || byte == 0x0D ? 0x20 : byte)
        }
        guard title.count <= UploadCommand.maxTitleBytes else {
            throw MastodonError(status: 422, message: "Validation failed: Text is too long (a photo's caption is at most "
                                    + "\(UploadCommand.maxTitleBytes) bytes of UTF-8, \(title.count) sent)")
        }
        return title
    }

    /// `like` or, for a photo the viewer likes, `unvote`; the status after.
    private func vote(_ call: MastodonCall, api: MastodonAPI, like: Bool) throws -> MastodonAnswer {
        _ = try call.user()
        let statuses = MastodonStatuses(call, api: api)
        let status = try statuses.status(of: call)
        guard case .photo(let id) = status.id else {
            throw MastodonError(status: 422, message: "Only photos can be favourited here, not comments")
        }
        if like {
            _ = try statuses.run("like", ["IdPhoto": String(id)])
        } else if status.favourited == true {
            // A dislike (the 2012 app's) is no favourite: unfavouriting leaves it.
            _ = try statuses.run("unvote", ["IdPhoto": String(id)])
        }
        guard let after = try statuses.photo(id) else { throw MastodonError.notFound }
        return statuses.answer(after)
    }
}

/// A post's `Idempotency-Key`: the same key from the same account within an
/// hour (a phone retrying a post whose answer it lost) answers the status
/// the first post made, as Mastodon's does, rather than a second one, or a
/// 422 because the media is posted already. Kept in the database (every
/// worker and host alike), by the key's hash.
struct PostIdempotencyKey {
    static let seconds: Int64 = 3600

    let userID: Int64
    let hash: String
    let store: any MediaStore
    let now: Int64

    init?(_ request: MastodonRequest, userID: Int64, store: any MediaStore, now: Int64) {
        guard let key = request.header("Idempotency-Key"), !key.isEmpty else { return nil }
        (self.userID, hash, self.store, self.now) = (userID, OAuthSecret.hash(key), store, now)
    }

    /// How long a claim waits for its post before it counts as abandoned
    /// (the request cut short): the default `request_timeout`.
    static let abandonedSeconds: Int64 = 120

    /// The key for this post, or the status a post with it made within the
    /// hour, or word that one is under way (two retries at once posted twice).
    func claim() throws -> PostClaim {
        try store.claimPost(userID: userID, keyHash: hash, since: now - Self.seconds, abandonedBefore: now - Self.abandonedSeconds, at: now)
    }

    /// The post failed: the key may be tried again.
    func release() {
        do {
            try store.releasePost(userID: userID, keyHash: hash)
        } catch {
            Log.error("Idempotency-Key of a post by user \(userID): \(error)")
        }
    }

    /// After the post, forgetting keys past their hour as it goes: a
    /// failure is logged, not answered (the post stands; only a retry would
    /// post again).
    func remember(_ status: StatusID) {
        do {
            try store.rememberPost(userID: userID, keyHash: hash, statusID: status.value, at: now)
            try store.forgetPosts(before: now - Self.seconds)
        } catch {
            Log.error("Idempotency-Key of a post by user \(userID): \(error)")
        }
    }
}
