/// `mark`: remembers where the signed-in user stopped reading: `home`, the
/// newest status read in the home timeline, `notifications`, the newest
/// notification read (one or both). Answers the markers set, each a
/// version on; `markers` reads them from any app or device.
public struct MarkCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "mark", "Remember where you stopped reading your home timeline or notifications.",
        parameters: [Input.home, Input.notifications], failures: [.other], result: .markers)

    public struct Input: CommandInput {
        static let home = CommandParameter("home", .integer(1...Int64.max), "the newest status read in the home timeline")
        static let notifications = CommandParameter("notifications", .integer(1...Int64.max),
                                                    "the newest notification read (one of `home` and `notifications`, or both)")
        public let lastRead: [(timeline: MarkerTimeline, id: Int64)]

        public init(from parameters: any RequestParameters) throws {
            let home = try Self.home.integer(parameters)
            let notifications = try Self.notifications.integer(parameters)
            lastRead = [(MarkerTimeline.home, home), (.notifications, notifications)].compactMap { timeline, id in id.map { (timeline, $0) } }
            if lastRead.isEmpty { throw ParameterRules.Missing(name: "home or notifications") }
        }
    }

    public enum Failure: APIFailure {
        case notKept
        public var message: String { "Read markers are kept once the database is migrated (ireporter migrate)" }
        public var kind: FailureKind { .other }
    }

    private let markers: any ReadMarkerStore
    private let now: () -> Int64

    public init(_ services: AppServices) { (markers, now) = (services.markers, services.now) }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> ReadMarkerList {
        do {
            return ReadMarkerList(markers: try input.lastRead.map { try markers.setMarker($0.timeline, lastReadID: $0.id, of: user.id, at: now()) })
        } catch is ReadMarkersNotKept {
            throw Failure.notKept
        }
    }
}
