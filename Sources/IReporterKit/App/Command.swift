/// A command's typed input, decoded from the request's parameters.
public protocol CommandInput {
    init(from parameters: any RequestParameters) throws
}

/// A command's typed result; `Results.swift` renders each as the original's JSON.
public protocol CommandOutput {
    var json: [UInt8] { get }
    /// `application/json` unless the output is something else (an image).
    var contentType: String { get }
    /// A file sent after `json` (then empty), for an answer too large to hold.
    var file: AnswerFile? { get }
}

extension CommandOutput {
    public var contentType: String { "application/json" }
    public var file: AnswerFile? { nil }
}

/// A command anyone may send: its `descriptor` (name, parameters, …)
/// and what it does.
public protocol Command {
    associatedtype Input: CommandInput
    associatedtype Output: CommandOutput
    var descriptor: CommandDescriptor { get }
    func run(_ input: Input, in context: CommandContext) throws -> Output
}

/// A command whose calls in one JSON-RPC batch read together: before the
/// batch runs, `readAhead` gets the inputs of all of its calls to the
/// command (one query where there would be one per call); each call then
/// answers exactly as alone, from what was read while nothing changed
/// since, until `endBatch`.
public protocol BatchReadingCommand: Command {
    func readAhead(_ inputs: [Input])
    func endBatch()
}

/// A command for a logged-in user only: the router checks the session
/// first and answers "Authorization required" without running it.
public protocol SignedInCommand {
    associatedtype Input: CommandInput
    associatedtype Output: CommandOutput
    var descriptor: CommandDescriptor { get }
    func run(_ input: Input, as user: SignedInUser, in context: CommandContext) throws -> Output
}

/// Whose session a `SignedInCommand` runs in.
public struct SignedInUser: Sendable {
    public let id: Int64
    public let session: Session

    /// The user of the request's session, if it is logged in (loaded once
    /// per request: `CommandContext.signedInUser`).
    static func of(_ context: CommandContext, in sessions: any SessionStore) throws -> SignedInUser? {
        try context.signedInUser(in: sessions)
    }

    /// The user of the session `cookie` names, if it is logged in.
    static func load(_ cookie: [UInt8]?, in sessions: any SessionStore) throws -> SignedInUser? {
        guard let cookie, let session = try sessions.load(id: cookie),
              let userID = session["IdUser"]?.intValue, userID != 0 else { return nil }
        return SignedInUser(id: userID, session: session)
    }
}

/// A command's parameters, when it takes none.
public struct NoInput: CommandInput {
    public init(from parameters: any RequestParameters) {}
}
