/// `like`, `dislike` and `unvote` (one handler, registered once for each
/// with its vote): the logged-in user's one vote on the photo `IdPhoto`,
/// set or removed; sending the same again changes nothing. Answers the
/// photo's counts and the vote.
public struct VoteCommand: SignedInCommand {
    public enum Failure: APIFailure {
        case noSuchPhoto
        case tooManyVotes

        public var message: String {
            switch self {
            case .noSuchPhoto: "No such photo"
            case .tooManyVotes: "Too many votes, please try again later"
            }
        }
    }

    private let vote: Vote?
    private let votes: any VoteStore
    private let counters: any SharedCounters
    private let perHour: Int

    /// `vote` nil: the command that removes the vote.
    public init(_ services: AppServices, vote: Vote?) {
        self.vote = vote
        votes = services.votes
        counters = services.counters
        perHour = services.policy.votesPerHour
    }

    public func run(_ input: PhotoReference, as user: SignedInUser, in context: CommandContext) throws -> VoteTally {
        if perHour > 0, try !counters.allow("vote:\(user.id)", limit: Int64(perHour), windowSeconds: 3600) {
            throw Failure.tooManyVotes
        }
        guard let tally = try votes.setVote(vote, photoID: input.photoID, userID: user.id) else { throw Failure.noSuchPhoto }
        counters.noteStreamChanged() // the counts of cached streams
        return VoteTally(photoID: input.photoID, extras: tally)
    }
}
