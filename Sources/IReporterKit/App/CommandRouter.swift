/// The table from command name (the `command` parameter) to its handler,
/// with the steps every command shares: the login check a
/// `SignedInCommand` declares, and turning failures into the original's
/// `{"error":"…"}` answers.
public struct CommandRouter {
    private typealias Handler = (any RequestParameters, CommandContext) throws -> any CommandOutput

    private let sessions: any SessionStore
    private var handlers: [String: Handler] = [:]

    public init(sessions: any SessionStore) { self.sessions = sessions }

    public mutating func on<C: Command>(_ name: String, _ command: C) {
        handlers[name] = { parameters, context in try command.run(try C.Input(from: parameters), in: context) }
    }

    public mutating func on<C: SignedInCommand>(_ name: String, _ command: C) {
        handlers[name] = { [sessions] parameters, context in
            let user = try Self.requireUser(context, sessions)
            return try command.run(try C.Input(from: parameters), as: user, in: context)
        }
    }

    /// Runs the named command. An unknown or missing name gets the empty
    /// answer the original's switch (without a default) gave.
    public func route(_ parameters: any RequestParameters, in context: CommandContext) -> APIResponse {
        guard let name = parameters.field("command"), let handler = handlers[String(decoding: name, as: UTF8.self)] else {
            return .empty
        }
        var response: APIResponse
        do {
            response = APIResponse(body: try handler(parameters, context).json)
        } catch let failure as any APIFailure {
            response = .failure(failure)
        } catch {
            Log.error("\(String(decoding: name.prefix(16), as: UTF8.self)): \(error)")
            response = .failure(ServiceUnavailable())
        }
        switch context.sessionChange {
        case .started(let id)?: response.setCookie.append(SessionCookie.started(id, secure: context.isSecure))
        case .ended?: response.setCookie.append(SessionCookie.expired(secure: context.isSecure))
        case nil: break
        }
        return response
    }

    /// The session's user, or "Authorization required".
    private static func requireUser(_ context: CommandContext, _ sessions: any SessionStore) throws -> SignedInUser {
        guard let user = try SignedInUser.of(context, in: sessions) else { throw AuthorizationRequired() }
        return user
    }
}
