/// `effects`: the effects `upload` and `preview` take, with what each does.
public struct EffectsCommand: Command {
    public let descriptor = CommandDescriptor("effects", "The effects upload and preview know.", readOnly: true, result: .effects)

    public init() {}

    public func run(_ input: NoInput, in context: CommandContext) -> EffectList {
        EffectList(effects: PhotoEffect.allCases)
    }
}
