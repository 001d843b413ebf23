/// `like`, `dislike` and `unvote` (one handler, registered once for each
/// with its vote): the logged-in user's one vote on the photo `IdPhoto`,
/// set or removed; sending the same again changes nothing. Answers the
/// photo's counts and the vote. A like tells the photo's owner
/// (`notifications`); a dislike or unvote takes that back.
public struct VoteCommand: SignedInCommand {
    public let descriptor: CommandDescriptor

    public enum Failure: APIFailure {
        case noSuchPhoto
        case tooManyVotes

        public var message: String {
            switch self {
            case .noSuchPhoto: "No such photo"
            case .tooManyVotes: "Too many votes, please try again later"
            }
        }

        public var kind: FailureKind {
            switch self {
            case .noSuchPhoto: .notFound
            case .tooManyVotes: .rateLimited
            }
        }
    }

    static let rateLimit = RateLimit("vote_rate_limit", \.voteRateLimit, counter: "vote", failure: Failure.tooManyVotes)

    private let vote: Vote?
    private let votes: any VoteStore
    private let photos: any PhotoStore
    private let notifier: Notifier
    private let counters: any SharedCounters
    private let perHour: Int

    /// `vote` nil: the command that removes the vote.
    public init(_ services: AppServices, vote: Vote?) {
        self.vote = vote
        let (name, summary) = switch vote {
        case .like: ("like", "Like a photo (one vote per person).")
        case .dislike: ("dislike", "Dislike a photo (one vote per person).")
        case nil: ("unvote", "Remove your vote.")
        }
        descriptor = CommandDescriptor(name, summary, parameters: [.photo], rateLimit: Self.rateLimit, failures: [.notFound],
                                       result: .voteTally)
        votes = services.votes
        photos = services.photos
        notifier = Notifier(services)
        counters = services.counters
        perHour = Self.rateLimit.perHour(services.policy)
    }

    public func run(_ input: PhotoReference, as user: SignedInUser, in context: CommandContext) throws -> VoteTally {
        try Self.rateLimit.charge(user, perHour: perHour, counters: counters)
        guard let (tally, changed) = try votes.setVote(vote, photoID: input.photoID, userID: user.id) else {
            throw Failure.noSuchPhoto
        }
        // The same vote again changes nothing: no notification told again
        // (one its owner dismissed would come back), no cached stream dropped.
        guard changed else { return VoteTally(photoID: input.photoID, extras: tally) }
        counters.noteStreamChanged() // the counts of cached streams
        if let photo = try photos.photo(id: input.photoID) {
            let event = NotificationEvent.favourite(of: photo, by: user.id)
            notifier.settle(event, told: vote == .like) {
                try votes.votes(by: user.id, on: [input.photoID])[input.photoID] == .like
            }
        }
        return VoteTally(photoID: input.photoID, extras: tally)
    }
}
