/// `liked`: the photos the signed-in user likes, the newest photo first,
/// paged with `stream`'s cursors (`since`, `after`, `before`, `count`; 50 by
/// default) and with its `extras`, in `stream`'s shape: the Mastodon API's
/// favourites. Ordered by photo, not by when each was liked: a vote keeps
/// no time. Refused until migration 013 (an index range on `votes`; without
/// it every vote would be read).
public struct LikedCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "liked", "Photos you like, the newest photo first.",
        parameters: CommandParameter.cursor + [.extras()], readOnly: true, failures: [.other], result: .photos)

    /// `feed`'s: a page and the extras.
    public typealias Input = FeedCommand.Input

    public enum Failure: APIFailure {
        case notIndexed
        public var message: String { "Liked photos are listed once the database is migrated (ireporter migrate)" }
        public var kind: FailureKind { .other }
    }

    private let votes: any VoteStore
    private let pages: PhotoPageByID

    public init(_ services: AppServices) {
        votes = services.votes
        pages = PhotoPageByID(photos: services.photos, media: services.media)
    }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> RenderedJSON {
        do {
            return RenderedJSON(json: try pages.render(try votes.likedPhotoIDs(by: user.id, in: input.page), extras: input.extras,
                                                       viewer: user.id))
        } catch is LikesNotIndexed {
            throw Failure.notIndexed
        }
    }
}
