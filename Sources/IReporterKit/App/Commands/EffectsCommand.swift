/// `effects`: the effects `upload` and `preview` take, with what each does.
public struct EffectsCommand: Command {
    public init() {}

    public func run(_ input: NoInput, in context: CommandContext) -> EffectList {
        EffectList(effects: PhotoEffect.allCases)
    }
}
