/// `preview`: a small photo (the `file` part, as `upload` sends it) with
/// `effect` rendered by the same code as `upload`, answered as the JPEG
/// itself, so a client shows exactly what would be stored. For a logged-in
/// user, at most `preview_rate_limit` an hour (each costs a decode and an
/// encode of up to `max_image_pixels`: issue 26). A preview never waits for
/// a decode slot: while every slot is taken it is refused at once, so that
/// previews in parallel do not hold the workers everyone's `stream` needs.
public struct PreviewCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "preview", "The photo (the file part, small) with an effect, as image/jpeg.", parameters: [Input.effect],
        fileParts: ["file"], rateLimit: PreviewCommand.rateLimit, failures: [.other, .unavailable], result: .jpeg)

    public struct Input: CommandInput {
        static let effect = CommandParameter.effect(required: true)
        public let file: UploadedFile?
        public let effect: PhotoEffect?

        public init(from parameters: any RequestParameters) throws {
            file = parameters.file("file")
            effect = try Self.effect.choice(parameters)
        }
    }

    public enum Failure: APIFailure {
        case noFile
        case noEffect
        case tooManyPreviews
        case busy

        public var message: String {
            switch self {
            case .noFile: "Preview needs a photo in the file field"
            case .noEffect: "Preview needs an effect: the effects command lists them"
            case .tooManyPreviews: "Too many previews, please try again later"
            case .busy: "The server is busy with other photos, please try again"
            }
        }

        public var kind: FailureKind {
            switch self {
            case .tooManyPreviews: .rateLimited
            case .busy: .unavailable
            case .noFile, .noEffect: .other
            }
        }
    }

    static let rateLimit = RateLimit("preview_rate_limit", \.previewRateLimit, counter: "preview", failure: Failure.tooManyPreviews)

    private let renderer: EffectRenderer
    private let maxPixels: Int
    private let decodeGate: DecodeGate?
    private let concurrentDecodes: Int
    private let counters: any SharedCounters
    private let perHour: Int

    public init(_ services: AppServices) {
        counters = services.counters
        perHour = Self.rateLimit.perHour(services.policy)
        maxPixels = services.policy.maxImagePixels
        renderer = EffectRenderer(thumbnailer: Thumbnailer(maxDecodeBytes: services.policy.maxDecodeBytes))
        decodeGate = services.decodeGate
        concurrentDecodes = services.policy.concurrentDecodes
    }

    public func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> JPEGImage {
        guard let spool = input.file?.spoolPath else { throw Failure.noFile }
        guard let effect = input.effect else { throw Failure.noEffect }
        try Self.rateLimit.charge(user, perHour: perHour, counters: counters)
        let started = monotonicMicros()
        defer { context.imageMicros = monotonicMicros() - started }
        do {
            guard let jpeg = try decodeGate.decodingIfFree(limit: concurrentDecodes, {
                try renderer.preview(fileAt: spool, effect: effect, maxPixels: maxPixels)
            }) else { throw Failure.busy }
            return JPEGImage(jpeg: jpeg)
        } catch let error as JPEGImageError {
            throw UploadCommand.Failure(error, maxPixels: maxPixels)
        }
    }
}
