/// `markers`: where the signed-in user stopped reading their home timeline
/// and their notifications, as `mark` (from any app or device) left it;
/// `timelines` asks for some (default: both). A timeline never marked is
/// left out.
public struct MarkersCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "markers", "Where you stopped reading your home timeline and notifications, as any of your apps marked it.",
        parameters: [Input.timelines], readOnly: true, result: .markers)

    public struct Input: CommandInput {
        static let timelines = CommandParameter.list("timelines", of: MarkerTimeline.self, "only these (default: both)",
                                                     invalid: ParameterRules.InvalidValue(name: "timelines"))
        public let timelines: [MarkerTimeline]

        public init(from parameters: any RequestParameters) throws {
            let chosen: [MarkerTimeline] = try Self.timelines.list(parameters)
            timelines = chosen.isEmpty ? MarkerTimeline.allCases : chosen
        }
    }

    private let markers: any ReadMarkerStore

    public init(_ services: AppServices) { markers = services.markers }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> ReadMarkerList {
        ReadMarkerList(markers: try markers.markers(of: user.id, in: input.timelines))
    }
}
