/// The table from command name (the `command` parameter) to its handler,
/// with the steps every command shares: the login check a
/// `SignedInCommand` declares, and turning failures into the original's
/// `{"error":"…"}` answers.
public struct CommandRouter {
    private typealias Handler = (any RequestParameters, CommandContext) throws -> any CommandOutput

    private let sessions: any SessionStore
    private var handlers: [String: (descriptor: CommandDescriptor, run: Handler)] = [:]
    /// The `BatchReadingCommand`s' read ahead (given each call's parameters) and its end.
    private var batchReaders: [String: (readAhead: ([any RequestParameters]) -> Void, end: () -> Void)] = [:]

    public init(sessions: any SessionStore) { self.sessions = sessions }

    /// Registers the command under its descriptor's name.
    public mutating func register<C: Command>(_ command: C) {
        handlers[command.descriptor.name] = (command.descriptor, Self.handler(command))
    }

    public mutating func register<C: BatchReadingCommand>(_ command: C) {
        handlers[command.descriptor.name] = (command.descriptor, Self.handler(command))
        batchReaders[command.descriptor.name] = ({ calls in command.readAhead(calls.compactMap { try? C.Input(from: $0) }) },
                                                 command.endBatch)
    }

    public mutating func register<C: SignedInCommand>(_ command: C) {
        var descriptor = command.descriptor
        descriptor.signIn = true
        handlers[descriptor.name] = (descriptor, { [sessions] parameters, context in
            let user = try Self.requireUser(context, sessions)
            return try command.run(try C.Input(from: parameters), as: user, in: context)
        })
    }

    /// Runs the named command. An unknown or missing name gets the empty
    /// answer the original's switch (without a default) gave.
    public func route(_ parameters: any RequestParameters, in context: CommandContext) -> APIResponse {
        guard let name = parameters.field("command"),
              let outcome = invoke(String(decoding: name, as: UTF8.self), parameters, in: context) else {
            return .empty
        }
        var response: APIResponse
        switch outcome {
        case .output(let output):
            response = APIResponse(body: output.json, contentType: output.contentType)
            response.file = output.file
        case .failure(let failure): response = .failure(failure)
        }
        response.setCookie += Self.cookies(for: context)
        return response
    }

    /// Runs `body` (a batch's calls, in order) after the commands that read
    /// together read ahead for these calls (those of at least two calls).
    public func batch<Result>(of calls: [(name: String, parameters: any RequestParameters)], _ body: () -> Result) -> Result {
        let readers = batchReaders.filter { name, _ in calls.count { $0.name == name } > 1 }
        for (name, reader) in readers { reader.readAhead(calls.filter { $0.name == name }.map(\.parameters)) }
        defer { for reader in readers.values { reader.end() } }
        return body()
    }

    /// The commands' descriptors, by name.
    public var descriptors: [CommandDescriptor] { handlers.values.map(\.descriptor).sorted { $0.name < $1.name } }

    /// The named command's descriptor, nil when there is none.
    public func descriptor(named name: String) -> CommandDescriptor? { handlers[name]?.descriptor }

    /// What a command answered.
    public enum Outcome {
        case output(any CommandOutput)
        case failure(any APIFailure)
    }

    /// The named command's output, or the failure to answer; nil when there
    /// is no such command. (The form API and JSON-RPC both run commands so.)
    public func invoke(_ name: String, _ parameters: any RequestParameters, in context: CommandContext) -> Outcome? {
        guard let handler = handlers[name] else { return nil }
        let outcome = run(handler.run, handler.descriptor, parameters, in: context)
        switch outcome {
        case .output: context.outcome = "ok"
        case .failure(let failure): context.outcome = failure.outcome
        }
        return outcome
    }

    private func run(_ handler: Handler, _ descriptor: CommandDescriptor, _ parameters: any RequestParameters,
                     in context: CommandContext) -> Outcome {
        // A browser's request from another web site may only read.
        if context.isCrossOrigin && !descriptor.readOnly { return .failure(CrossOriginRefused()) }
        do {
            return .output(try handler(parameters, context))
        } catch let failure as any APIFailure {
            assert(descriptor.errors.contains(failure.kind), "\(descriptor.name): \(failure) is not among its descriptor's errors")
            return .failure(failure)
        } catch PhotoStoreError.accountRemoved {
            // Deleted while its photo, comment or vote was on its way: as a session gone.
            return .failure(AuthorizationRequired())
        } catch let error as DatabaseError where error.code == .textNotStorable {
            Log.warning("\(descriptor.name.prefix(16)): \(error) (a db_charset other than latin1 converts text into the latin1 columns: docs/CONFIGURATION.md)")
            return .failure(TextNotStorable())
        } catch {
            Log.error("\(descriptor.name.prefix(16)): \(error)")
            return .failure(ServiceUnavailable())
        }
    }

    /// The `Set-Cookie` values for a session the command started or ended.
    static func cookies(for context: CommandContext) -> [String] {
        switch context.sessionChange {
        case .started(let id)?: [SessionCookie.started(id, secure: context.isSecure)]
        case .ended?: [SessionCookie.expired(secure: context.isSecure)]
        case nil: []
        }
    }

    private static func handler<C: Command>(_ command: C) -> Handler {
        { parameters, context in try command.run(try C.Input(from: parameters), in: context) }
    }

    /// The session's user, or "Authorization required".
    private static func requireUser(_ context: CommandContext, _ sessions: any SessionStore) throws -> SignedInUser {
        guard let user = try SignedInUser.of(context, in: sessions) else { throw AuthorizationRequired() }
        return user
    }
}
