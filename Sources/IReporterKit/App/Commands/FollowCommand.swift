/// `follow` and `unfollow` (one handler, registered once for each): the
/// signed-in user follows the account `IdUser`, or no longer does; sending
/// the same again changes nothing. A new follow notifies its followee (an
/// unfollow takes the notification back). Answers the account as `person`
/// does, its counts after the change.
public struct FollowCommand: SignedInCommand {
    public let descriptor: CommandDescriptor

    public enum Failure: APIFailure {
        case noSuchAccount
        case yourself
        case tooManyFollows
        case followingTooMany(limit: Int)

        public var message: String {
            switch self {
            case .noSuchAccount: "No such account"
            case .yourself: "You cannot follow yourself"
            case .tooManyFollows: "Too many follows, please try again later"
            case .followingTooMany(let limit): "You cannot follow more than \(limit) accounts"
            }
        }

        public var kind: FailureKind {
            switch self {
            case .noSuchAccount: .notFound
            case .yourself, .followingTooMany: .other
            case .tooManyFollows: .rateLimited
            }
        }
    }

    static let rateLimit = RateLimit("follow_rate_limit", \.followRateLimit, counter: "follow", failure: Failure.tooManyFollows)

    private let follows: Bool
    private let graph: any FollowStore
    private let photos: any PhotoStore
    private let counters: any SharedCounters
    private let notifier: Notifier
    private let perHour: Int
    /// Accounts one may follow at once (`follow_limit`); 0: no limit.
    private let limit: Int
    private let now: () -> Int64

    /// `follows` false: the command that unfollows.
    public init(_ services: AppServices, follows: Bool) {
        self.follows = follows
        descriptor = CommandDescriptor(follows ? "follow" : "unfollow",
                                       follows ? "Follow an account: its photos join your `feed`." : "Stop following an account.",
                                       parameters: [.account], rateLimit: Self.rateLimit, failures: [.notFound, .other],
                                       result: .person)
        graph = services.follows
        photos = services.photos
        counters = services.counters
        notifier = Notifier(services)
        perHour = Self.rateLimit.perHour(services.policy)
        limit = follows ? services.policy.followLimit : 0
        now = services.now
    }

    public func run(_ input: AccountReference, as user: SignedInUser, in context: CommandContext) throws -> PersonSummary {
        if input.userID == user.id { throw Failure.yourself }
        guard let person = try photos.person(id: input.userID) else { throw Failure.noSuchAccount }
        // (Follows at once may each pass it: it bounds the feed's work, no exact count.)
        if limit > 0, try graph.followingCount(of: user.id) >= limit, try !graph.isFollowing(user.id, person.id) {
            throw Failure.followingTooMany(limit: limit)
        }
        try Self.rateLimit.charge(user, perHour: perHour, counters: counters)
        let event = NotificationEvent.follow(of: person.id, by: user.id)
        let changed = follows ? try graph.follow(person.id, by: user.id, created: now()) : try graph.unfollow(person.id, by: user.id)
        if changed {
            counters.noteStreamChanged() // the follower's cached feeds
            notifier.settle(event, told: follows) { try graph.isFollowing(user.id, person.id) }
        }
        return PersonSummary(person: person, counts: try graph.counts(of: person.id, viewer: user.id))
    }
}
