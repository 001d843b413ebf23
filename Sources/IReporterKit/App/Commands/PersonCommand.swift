/// `person`: the account `IdUser` as a profile shows it: its name, photo
/// count, followers and following, and whether the signed-in viewer
/// follows it (null without a session).
public struct PersonCommand: Command {
    public let descriptor = CommandDescriptor(
        "person", "An account's name and counts, and whether you follow it.", parameters: [.account], readOnly: true,
        failures: [.notFound], result: .person)

    private let photos: any PhotoStore
    private let graph: any FollowStore
    private let sessions: any SessionStore

    public init(_ services: AppServices) {
        photos = services.photos
        graph = services.follows
        sessions = services.sessions
    }

    public func run(_ input: AccountReference, in context: CommandContext) throws -> PersonSummary {
        guard let person = try photos.person(id: input.userID) else { throw FollowCommand.Failure.noSuchAccount }
        let viewer = try SignedInUser.of(context, in: sessions)
        return PersonSummary(person: person, counts: try graph.counts(of: person.id, viewer: viewer?.id))
    }
}
