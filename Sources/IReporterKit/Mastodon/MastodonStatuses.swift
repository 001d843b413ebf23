/// Statuses made from what the declared commands answer, as one call's
/// user sees them: photos as `stream` (and `feed`, `search`) answer them
/// with the extras a status shows (`StreamRows`), comments as `comments`
/// and `comment` answer them; each photo with its description (alt text).
/// The accounts inside statuses carry no counts (0): they would cost a
/// query per author on every page; `/api/v1/accounts/:id` has them.
struct MastodonStatuses {
    /// The most replies `context` lists (Mastodon, too, cuts a long thread).
    static let maxReplies = 400

    let call: MastodonCall
    let services: AppServices
    let links: MastodonLinks
    /// One context for the call: the token's user is read once.
    let context: CommandContext
    private let renderedStatuses: RenderedStatuses

    init(_ call: MastodonCall, api: MastodonAPI) {
        self.call = call
        services = api.services
        links = MastodonLinks(siteURL: call.request.siteURL)
        context = call.commandContext()
        renderedStatuses = api.renderedStatuses
    }

    private var hasViewer: Bool { call.grant?.userID != nil }

    func run(_ name: String, _ arguments: CommandArguments) throws(MastodonError) -> any CommandOutput {
        try call.run(name, arguments, in: context)
    }

    /// The rows of `stream`, `feed` or `search` asked for with the status extras.
    func photoRows(_ command: String, _ arguments: CommandArguments) throws -> [(photo: PhotoRecord, extras: PhotoExtras)] {
        try StreamRows.decode(try photoAnswer(command, arguments))
    }

    /// The answer of `stream`, `feed` or `search` asked for with the status extras, as the command rendered it.
    func photoAnswer(_ command: String, _ arguments: CommandArguments) throws -> [UInt8] {
        var arguments = arguments
        arguments.fields["extras"] = Array(StreamRows.extras.utf8)
        return try run(command, arguments).json
    }

    /// The rows' statuses, each with its description as the rows carry it (`StreamRows.extras`).
    func statuses(_ rows: [(photo: PhotoRecord, extras: PhotoExtras)]) -> [StatusEntity] {
        rows.map { row, extras in
            let photo = withStoredText(row)
            return StatusEntity(photo: photo, extras: extras, account: AccountEntity(id: photo.userID, username: photo.username),
                                description: extras.description, viewer: hasViewer)
        }
    }

    /// A title or name the form API answers null (its bytes are no UTF-8,
    /// as PHP's json_encode answers them: a PHP-era title cut inside a
    /// character) read from the store, shown as well as its bytes allow.
    private func withStoredText(_ photo: PhotoRecord) -> PhotoRecord {
        guard photo.title == nil || photo.username == nil, let stored = try? services.photos.photo(id: photo.id) else { return photo }
        return stored
    }

    /// The photo's status; nil when there is no such photo.
    func photo(_ id: Int64) throws -> StatusEntity? {
        statuses(try photoRows("stream", ["IdPhoto": String(id)])).first
    }

    /// The comment's status; nil when there is no such comment (or its photo is gone).
    func comment(_ id: Int64) throws -> StatusEntity? {
        guard let comment = try services.comments.comment(id: id), let photo = try photo(comment.photoID) else { return nil }
        return StatusEntity(comment: comment, photoOwner: photo.account.id, viewer: hasViewer)
    }

    func status(_ id: StatusID) throws -> StatusEntity? {
        switch id {
        case .photo(let photoID): try photo(photoID)
        case .comment(let commentID): try comment(commentID)
        }
    }

    /// A status the path names, or 404.
    func status(of call: MastodonCall) throws -> StatusEntity {
        guard let text = call.pathParameter("id"), let id = StatusID(text), let status = try status(id) else {
            throw MastodonError.notFound
        }
        return status
    }

    /// The photo's comments, oldest first, as statuses (`comments`, a page at a time).
    func replies(to photo: StatusEntity) throws -> [StatusEntity] {
        var found: [CommentRecord] = []
        var before: Int64?
        while found.count < Self.maxReplies {
            var arguments: CommandArguments = ["IdPhoto": String(photo.photoID), "count": String(ParameterRules.pageSizes.upperBound)]
            if let before { arguments.fields["before"] = Array(String(before).utf8) }
            guard let page = try run("comments", arguments) as? CommentList, let last = page.comments.last else { break }
            found += page.comments
            before = last.id
        }
        return found.prefix(Self.maxReplies).reversed().map {
            StatusEntity(comment: $0, photoOwner: photo.account.id, viewer: hasViewer)
        }
    }

    /// `[status,…]`, each status rendered once per worker while it shows the same.
    func list(_ statuses: [StatusEntity]) -> [UInt8] { renderedStatuses.list(statuses, links: links) }

    /// A page of statuses as Mastodon answers it, with its `Link`.
    func page(_ statuses: [StatusEntity], _ page: TimelinePage) -> MastodonAnswer {
        self.page(body: list(statuses), ids: statuses.map(\.id.value), page)
    }

    /// A page already rendered (`body`, the statuses `ids`).
    func page(body: [UInt8], ids: [Int64], _ page: TimelinePage) -> MastodonAnswer {
        var answer = MastodonAnswer.json(body)
        if let link = page.link(siteURL: call.request.siteURL, path: call.request.path, ids: ids) { answer.headers.append(link) }
        return answer
    }

    func answer(_ status: StatusEntity) -> MastodonAnswer { .json(status.json(links: links)) }
}
