/// `liked`: the photos the signed-in user likes, the newest photo first,
/// paged with `since`, `before` and `count` (50 by default) and with
/// `stream`'s `extras`, in `stream`'s shape: the Mastodon API's
/// favourites. Ordered by photo, not by when each was liked: a vote keeps
/// no time.
public struct LikedCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "liked", "Photos you like, the newest photo first.",
        parameters: CommandParameter.cursor + [.extras()], readOnly: true, result: .photos)

    /// `feed`'s: a page and the extras.
    public typealias Input = FeedCommand.Input

    private let votes: any VoteStore
    private let pages: PhotoPageByID

    public init(_ services: AppServices) {
        votes = services.votes
        pages = PhotoPageByID(photos: services.photos, media: services.media)
    }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> RenderedJSON {
        RenderedJSON(json: try pages.render(try votes.likedPhotoIDs(by: user.id, in: input.page), extras: input.extras,
                                            viewer: user.id))
    }
}
