/// `logout`: ends the session and expires the cookie (an empty answer, as
/// the original's `session_destroy()` gave).
public struct LogoutCommand: Command {
    public let descriptor = CommandDescriptor("logout", "End the session.", result: .nothing)

    private let sessions: any SessionStore

    public init(_ services: AppServices) { sessions = services.sessions }

    public func run(_ input: NoInput, in context: CommandContext) -> NoContent {
        guard let cookie = context.sessionCookie else { return NoContent() }
        if SessionID.isWellFormed(cookie) { sessions.destroy(id: String(decoding: cookie, as: UTF8.self)) }
        context.sessionChange = .ended
        return NoContent()
    }
}
