/// The Mastodon-compatible API's routes: method and path pattern
/// (`/api/v1/statuses/:id/favourite`) to handler, with the scope a token
/// must cover. The router answers what every endpoint shares: an unknown
/// path, a missing or bad token, a scope the token lacks.
public struct MastodonRouter {
    public typealias Handler = (MastodonCall) throws -> MastodonAnswer

    private struct Route {
        let segments: [Substring]
        let access: Access
        let handler: Handler
    }

    /// What a route asks of the request's bearer token.
    private enum Access {
        /// Public: a token is optional, but one that is sent must be valid,
        /// and cover this scope when there is one (it makes its user the
        /// viewer: their likes shown).
        case optionalToken(covering: OAuthScope?)
        /// A valid token whose scopes cover this one.
        case token(OAuthScope)
        /// Never looked at (nor counted as its user's by the rate limit).
        case tokenIgnored
    }

    /// Which routes a request may match: of its method and its number of
    /// path segments, in the order they were added (the first match wins).
    private struct Shape: Hashable {
        let method: HTTPMethod
        let segmentCount: Int
    }

    private var routes: [Shape: [Route]] = [:]
    private let tokens: any AccessTokens
    private let commands: CommandRouter
    private let rateLimit: MastodonRateLimit?

    init(tokens: any AccessTokens, commands: CommandRouter, rateLimit: MastodonRateLimit? = nil) {
        self.tokens = tokens
        self.commands = commands
        self.rateLimit = rateLimit
    }

    /// Adds a route. `scope` nil: public (a token is optional, but one that
    /// is sent must be valid, as Mastodon has it); else a valid token whose
    /// scopes cover it.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, scope: OAuthScope?, _ handler: @escaping Handler) {
        add(method, pattern, scope.map { .token($0) } ?? .optionalToken(covering: nil), handler)
    }

    /// Adds a public route whose token, when one is sent, must cover
    /// `scope` (Mastodon's `authorize_if_got_token!`): a `profile` or
    /// `write`-only token does not read as its user.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, ifTokenSent scope: OAuthScope, _ handler: @escaping Handler) {
        add(method, pattern, .optionalToken(covering: scope), handler)
    }

    /// Adds a route that never looks at a bearer token: app registration,
    /// the OAuth endpoints (which know their client by its id and secret)
    /// and the instance's description, where Mastodon ignores one. A client
    /// that sends its last token with every request (Mastodon.py) can then
    /// read the instance and sign in again after that token was revoked.
    public mutating func addIgnoringToken(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping Handler) {
        add(method, pattern, .tokenIgnored, handler)
    }

    private mutating func add(_ method: HTTPMethod, _ pattern: String, _ access: Access, _ handler: @escaping Handler) {
        precondition(pattern.hasPrefix("/"), "\(pattern): a route is an absolute path")
        let segments = pattern.split(separator: "/")
        routes[Shape(method: method, segmentCount: segments.count), default: []]
            .append(Route(segments: segments, access: access, handler: handler))
    }

    /// Whether some route has this path (any method): what CORS's preflight may allow.
    public func knows(path: String) -> Bool {
        let parts = Self.segments(of: path)
        return routes.contains { shape, routes in
            shape.segmentCount == parts.count && routes.contains { Self.match($0.segments, parts) != nil }
        }
    }

    /// The answer to `request`: its route's, or the error in Mastodon's shape.
    public func answer(_ request: MastodonRequest) -> MastodonAnswer {
        // The rate limit's headers go with every answer of a counted request,
        // its own 429 included; not with a command's 429 (uploads an hour, …),
        // which they would tell a client to retry within minutes.
        var limitHeaders: [(name: String, value: String)] = []
        var limitReached = false
        var answer: MastodonAnswer
        do {
            answer = try routed(request, limitHeaders: &limitHeaders, limitReached: &limitReached)
        } catch let error as MastodonError {
            answer = error.answer
        } catch {
            Log.error("\(request.method.rawValue) \(request.path.prefix(64)): \(error)")
            answer = MastodonError.unavailable.answer
        }
        if answer.status != 429 || limitReached { answer.headers += limitHeaders }
        return answer
    }

    private func routed(_ request: MastodonRequest, limitHeaders: inout [(name: String, value: String)],
                        limitReached: inout Bool) throws -> MastodonAnswer {
        let parts = Self.segments(of: request.path)
        for route in routes[Shape(method: request.method, segmentCount: parts.count)] ?? [] {
            guard let parameters = Self.match(route.segments, parts) else { continue }
            let grant = try authorize(request, route.access)
            if let rateLimit {
                let (allowed, headers) = try rateLimit.use(request, grant: grant)
                limitHeaders = headers
                limitReached = !allowed
                guard allowed else { throw MastodonRateLimit.exceeded }
            }
            return try route.handler(MastodonCall(request: request, pathParameters: parameters, grant: grant, commands: commands))
        }
        throw MastodonError.notFound
    }

    /// The request's token's grant, checked as the route asks.
    private func authorize(_ request: MastodonRequest, _ access: Access) throws -> AccessGrant? {
        if case .tokenIgnored = access { return nil }
        guard let token = request.bearerToken else {
            if case .optionalToken = access { return nil }
            throw MastodonError.invalidToken
        }
        guard let grant = try tokens.grant(forToken: token) else { throw MastodonError.invalidToken }
        switch access {
        case .token(let scope), .optionalToken(covering: let scope?):
            if !grant.scopes.covers(scope) { throw MastodonError.outsideScopes }
        case .optionalToken(covering: nil), .tokenIgnored:
            break
        }
        return grant
    }

    /// A path's segments, split once for every route it is matched against
    /// (and by what must recognise a route as the router does: the
    /// authorization page's headers, the signing in's rate count).
    static func segments(of path: String) -> [Substring] { path.split(separator: "/", omittingEmptySubsequences: true) }

    /// The path's (`parts`, as many as `segments`) `:name` segments by name, nil when it does not match.
    private static func match(_ segments: [Substring], _ parts: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, parts) {
            if segment.first == ":" {
                parameters[String(segment.dropFirst())] = String(part)
            } else if segment != part {
                return nil
            }
        }
        return parameters
    }
}

/// A request matched to its route: what a handler works with.
public struct MastodonCall {
    public let request: MastodonRequest
    public let pathParameters: [String: String]
    /// The token's grant; nil on a public route called without one.
    public let grant: AccessGrant?
    private let commands: CommandRouter

    init(request: MastodonRequest, pathParameters: [String: String], grant: AccessGrant?, commands: CommandRouter) {
        (self.request, self.pathParameters, self.grant, self.commands) = (request, pathParameters, grant, commands)
    }

    public var parameters: MastodonParameters { request.parameters }

    public func pathParameter(_ name: String) -> String? { pathParameters[name] }

    /// A path id as a number; 404 for anything else (as Mastodon answers
    /// an id it has no record of).
    public func id(_ name: String = "id") throws(MastodonError) -> Int64 {
        guard let text = pathParameters[name], let id = CommandParameter.wholeNumber(Array(text.utf8), in: 1...Int64.max)
        else { throw MastodonError.notFound }
        return id
    }

    /// The token's user; 422 for an app's own token (client credentials).
    public func user() throws(MastodonError) -> SignedInUser {
        guard let id = grant?.userID else { throw MastodonError.userRequired }
        return SignedInUser(token: id)
    }

    /// A context in which the declared commands run as the token's user
    /// (no one, without a user token).
    public func commandContext() -> CommandContext {
        CommandContext(session: RequestSession(signedIn: grant?.userID.map(SignedInUser.init(token:))),
                       isSecure: request.isSecure, clientAddress: request.clientAddress, arrived: request.arrived)
    }

    /// Runs the declared command `name` as the token's user, in
    /// `context` (a fresh one when nil): its output, or its failure as
    /// Mastodon's error (`MastodonError.init(_:)`).
    public func run(_ name: String, _ arguments: CommandArguments,
                    in context: CommandContext? = nil) throws(MastodonError) -> any CommandOutput {
        switch commands.invoke(name, arguments, in: context ?? commandContext()) {
        case .output(let output)?: return output
        case .failure(let failure)?: throw MastodonError(failure)
        case nil: preconditionFailure("\(name) is no declared command")
        }
    }
}

extension MastodonError {
    /// A declared command's failure, with the status Mastodon gives its kind.
    public init(_ failure: any APIFailure) {
        let status = switch failure.kind {
        case .invalidParameters, .other: 422
        case .authorization: 401
        case .notFound: 404
        case .notAllowed: 403
        case .rateLimited: 429
        case .unavailable: 503
        }
        self.init(status: status, message: failure.kind == .notFound ? "Record not found" : failure.message)
    }
}

/// A declared command's parameters, given by an endpoint (`IdPhoto`, a spooled `file`).
public struct CommandArguments: RequestParameters, ExpressibleByDictionaryLiteral {
    public var fields: [String: [UInt8]]
    public var files: [String: UploadedFile] = [:]

    public init(fields: [String: [UInt8]] = [:], files: [String: UploadedFile] = [:]) {
        (self.fields, self.files) = (fields, files)
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = Dictionary(elements.map { ($0, Array($1.utf8)) }, uniquingKeysWith: { _, last in last })
    }

    public func field(_ name: String) -> [UInt8]? { fields[name] }
    public func file(_ name: String) -> UploadedFile? { files[name] }
}

extension SignedInUser {
    /// An access token's user: no PHP session holds it.
    init(token userID: Int64) {
        self.init(id: userID, session: Session(id: "", entries: [("IdUser", .string(Array(String(userID).utf8)))]))
    }
}
