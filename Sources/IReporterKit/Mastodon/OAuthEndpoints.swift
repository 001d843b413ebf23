/// Mastodon's OAuth 2.0 (docs.joinmastodon.org/methods/apps, /methods/oauth):
/// app registration, the authorization page, the token and revocation
/// endpoints, the server's metadata (RFC 8414), and registration of an
/// account through an app. The rules are `OAuthServer`'s; passwords are
/// checked by `login`'s own check, throttle included.
struct OAuthEndpoints: MastodonEndpoints {
    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        router.addIgnoringToken(.post, "/api/v1/apps") { call in try registerApp(call, api) }
        router.add(.get, "/api/v1/apps/verify_credentials", scope: nil) { call in
            guard let grant = call.grant, let app = try api.services.oauth.app(id: grant.appID) else { throw MastodonError.invalidToken }
            return .json(Self.application(app, secret: nil))
        }
        router.addIgnoringToken(.get, "/oauth/authorize") { call in try authorize(call, api, posted: false) }
        router.addIgnoringToken(.post, "/oauth/authorize") { call in try authorize(call, api, posted: true) }
        router.addIgnoringToken(.post, "/oauth/token") { call in try oauthErrors { try token(call, api) } }
        router.addIgnoringToken(.post, "/oauth/revoke") { call in
            try oauthErrors {
                let server = api.services.oauthServer
                try server.revoke(token: call.parameters.string("token"), app: try client(call, server))
                return .emptyObject
            }
        }
        router.addIgnoringToken(.get, "/.well-known/oauth-authorization-server") { call in .json(Self.metadata(call.request.siteURL)) }
        router.add(.post, "/api/v1/accounts", scope: .writeAccounts) { call in try registerAccount(call, api) }
    }

    // MARK: apps

    private func registerApp(_ call: MastodonCall, _ api: MastodonAPI) throws -> MastodonAnswer {
        let parameters = call.parameters
        if let name = parameters.bytes("client_name"), String(validating: name, as: UTF8.self) == nil {
            throw MastodonError(status: 422, message: "Validation failed: Application name must be UTF-8 text")
        }
        guard let scopes = OAuthScopes(parsing: parameters.string("scopes") ?? "") else {
            throw MastodonError(status: 422, message: "Validation failed: Scopes are not all scopes this server knows")
        }
        do {
            let (app, secret) = try api.services.oauthServer.registerApp(
                name: parameters.string("client_name") ?? "", redirectURIs: parameters.strings("redirect_uris"), scopes: scopes,
                website: parameters.string("website") ?? "")
            return .json(Self.application(app, secret: secret))
        } catch let refusal as OAuthServer.AppRefusal {
            throw MastodonError(status: 422, message: refusal.message)
        }
    }

    /// Mastodon's Application entity; with the client's id and secret when just registered.
    static func application(_ app: OAuthApp, secret: String?) -> [UInt8] {
        var json = PHPJSONWriter()
        json.raw("{\"id\":")
        json.string(String(app.id))
        json.raw(",\"name\":")
        json.string(app.name)
        json.raw(",\"website\":")
        json.nullableString(app.website.isEmpty ? nil : Array(app.website.utf8))
        json.raw(",\"scopes\":[")
        for (index, scope) in app.scopes.scopes.enumerated() {
            if index > 0 { json.raw(",") }
            json.string(scope.name)
        }
        json.raw("],\"redirect_uri\":")
        json.string(app.redirectURIs.joined(separator: "\n"))
        json.raw(",\"redirect_uris\":[")
        for (index, uri) in app.redirectURIs.enumerated() {
            if index > 0 { json.raw(",") }
            json.string(uri)
        }
        json.raw("]")
        if let secret {
            json.raw(",\"client_id\":")
            json.string(app.clientID)
            json.raw(",\"client_secret\":")
            json.string(secret)
            json.raw(",\"client_secret_expires_at\":0")
        }
        json.raw("}")
        return json.bytes
    }

    // MARK: the authorization page

    private func authorize(_ call: MastodonCall, _ api: MastodonAPI, posted: Bool) throws -> MastodonAnswer {
        let parameters = call.parameters
        let server = api.services.oauthServer
        let request: OAuthServer.AuthorizationRequest
        do {
            request = try server.authorizationRequest(
                clientID: parameters.string("client_id"), redirectURI: parameters.string("redirect_uri"),
                responseType: parameters.string("response_type"), scope: parameters.string("scope"),
                state: parameters.string("state"), challenge: parameters.string("code_challenge"),
                challengeMethod: parameters.string("code_challenge_method"))
        } catch OAuthServer.AuthorizationProblem.refused(let reason) {
            return AuthorizePage(step: .refused(reason), request: nil).answer(status: 400)
        } catch OAuthServer.AuthorizationProblem.redirected(let error, let request) {
            // Shown here, never redirected at once: the app's registration proves nothing.
            let parameters = [("error", error.code.rawValue), ("error_description", error.description)]
            let step: AuthorizePage.Step = request.isOutOfBand ? .refused(error.description)
                : .failed(error.description, returnTo: request.redirect(with: parameters))
            return AuthorizePage(step: step, request: request).answer(status: 400)
        }
        // As the web client's commands: a page of another site cannot make
        // a signed-in browser authorize (or log in).
        if posted && call.request.isCrossOrigin {
            return AuthorizePage(step: .refused("This form can only be sent from this site's own page."), request: nil)
                .answer(status: 403)
        }
        let context = CommandContext(sessionCookie: Cookies.sessionID(call.request.header("Cookie")),
                                     isSecure: call.request.isSecure, clientAddress: call.request.clientAddress)
        let user = try context.signedInUser(in: api.services.sessions)
        switch posted ? parameters.string("action") : nil {
        case "login":
            return try logIn(call, request, context)
        case "authorize":
            guard let user else { return AuthorizePage(step: .login(error: nil), request: request).answer() }
            let code = try server.issueCode(for: request, userID: user.id)
            if request.isOutOfBand { return AuthorizePage(step: .code(code), request: request).answer() }
            return Self.sendBack(request, [("code", code)])
        case "deny":
            return Self.sendBack(request, [("error", OAuthError.Code.accessDenied.rawValue),
                                           ("error_description", OAuthError(.accessDenied).description)])
        case "switch":
            return AuthorizePage(step: .login(error: nil), request: request).answer()
        default:
            // `force_login`: an app adding a second account of this site (Tusky, Ivory) asks for the form.
            guard let user, parameters.bool("force_login") != true else {
                return AuthorizePage(step: .login(error: nil), request: request).answer()
            }
            let username = try api.services.photos.person(id: user.id).map { String(decoding: $0.username, as: UTF8.self) }
            return AuthorizePage(step: .consent(username: username ?? "#\(user.id)"), request: request).answer()
        }
    }

    /// The `login` command with the typed password (the app's value derived
    /// from it, the typed one beside it for the web client's older
    /// accounts): its checks and throttle, and the browser signed in to the
    /// web client too, as Mastodon's authorization page does.
    private func logIn(_ call: MastodonCall, _ request: OAuthServer.AuthorizationRequest,
                       _ context: CommandContext) throws -> MastodonAnswer {
        let typed = call.parameters.bytes("password") ?? []
        let arguments = CommandArguments(fields: ["username": call.parameters.bytes("username") ?? [],
                                                  "password": AppPassword.derived(fromTyped: typed), "legacy_password": typed])
        let signedIn: SignedIn
        do {
            guard let output = try call.run("login", arguments, in: context) as? SignedIn else { throw MastodonError.unavailable }
            signedIn = output
        } catch let error as MastodonError where error.status != 503 {
            return AuthorizePage(step: .login(error: error.message), request: request).answer(status: error.status)
        }
        var cookie: [(name: String, value: String)] = []
        if case .started(let id)? = context.sessionChange {
            cookie = [("Set-Cookie", SessionCookie.started(id, secure: call.request.isSecure))]
        }
        return AuthorizePage(step: .consent(username: String(decoding: signedIn.user.username, as: UTF8.self)), request: request)
            .answer(extraHeaders: cookie)
    }

    /// A 302 to the app's redirect URI with `parameters` and the state; for
    /// an out-of-band app, an error on our page instead.
    private static func sendBack(_ request: OAuthServer.AuthorizationRequest, _ parameters: [(String, String)]) -> MastodonAnswer {
        if request.isOutOfBand {
            return AuthorizePage(step: .refused(parameters.last?.1 ?? ""), request: nil).answer(status: 400)
        }
        return .redirect(to: request.redirect(with: parameters))
    }

    // MARK: tokens

    /// The client named by HTTP Basic (RFC 6749 §2.3.1: each part
    /// form-encoded), else by client_id and client_secret in the body.
    private func client(_ call: MastodonCall, _ server: OAuthServer) throws -> OAuthApp {
        if let authorization = call.request.header("Authorization"), authorization.lowercased().hasPrefix("basic ") {
            let decoded = Base64.decode(String(authorization.dropFirst(6).drop { $0 == " " })).map { String(decoding: $0, as: UTF8.self) }
            guard let decoded, let colon = decoded.firstIndex(of: ":") else { throw OAuthError(.invalidClient) }
            let id = PHPStrings.urlDecode(Array(decoded[..<colon].utf8))
            let secret = PHPStrings.urlDecode(Array(decoded[decoded.index(after: colon)...].utf8))
            return try server.authenticateClient(id: String(decoding: id, as: UTF8.self), secret: String(decoding: secret, as: UTF8.self))
        }
        return try server.authenticateClient(id: call.parameters.string("client_id"), secret: call.parameters.string("client_secret"))
    }

    private func token(_ call: MastodonCall, _ api: MastodonAPI) throws -> MastodonAnswer {
        let parameters = call.parameters
        let server = api.services.oauthServer
        guard let grantType = parameters.string("grant_type") else { throw OAuthError.missing("grant_type") }
        let issued: OAuthServer.IssuedToken
        switch grantType {
        case "authorization_code":
            let app = try client(call, server)
            issued = try server.exchange(code: parameters.string("code"), redirectURI: parameters.string("redirect_uri"),
                                         verifier: parameters.string("code_verifier"), app: app)
        case "password":
            let app = try client(call, server)
            guard let username = parameters.bytes("username") else { throw OAuthError.missing("username") }
            guard let typed = parameters.bytes("password") else { throw OAuthError.missing("password") }
            let user: UserRecord
            do {
                let credentials = try Credentials(from: CommandArguments(fields: [
                    "username": username, "password": AppPassword.derived(fromTyped: typed), "legacy_password": typed]))
                user = try PasswordCheck(api.services).user(for: credentials, address: call.request.clientAddress)
            } catch let failure as LoginCommand.Failure where failure.kind == .rateLimited {
                // As every other door says it (JSON-RPC's -32004, the page's 429): a client backs off on 429.
                throw MastodonError(failure)
            } catch let failure as LoginCommand.Failure {
                throw OAuthError(.invalidGrant, failure.message)
            }
            issued = try server.issueToken(app: app, userID: user.id, scope: parameters.string("scope"))
        case "client_credentials":
            issued = try server.issueToken(app: try client(call, server), userID: nil, scope: parameters.string("scope"))
        default:
            throw OAuthError(.unsupportedGrantType)
        }
        return .json(Self.token(issued))
    }

    /// Mastodon's Token entity.
    static func token(_ issued: OAuthServer.IssuedToken) -> [UInt8] {
        var json = PHPJSONWriter()
        json.raw("{\"access_token\":")
        json.string(issued.secret)
        json.raw(",\"token_type\":\"Bearer\",\"scope\":")
        json.string(issued.scopes.description)
        json.raw(json: ",\"created_at\":\(issued.created)}")
        return json.bytes
    }

    /// RFC 6749's errors in Mastodon's shape (`error`, `error_description`).
    private func oauthErrors(_ body: () throws -> MastodonAnswer) throws -> MastodonAnswer {
        do {
            return try body()
        } catch let error as OAuthError {
            throw MastodonError(status: error.status, message: error.code.rawValue, description: error.description)
        }
    }

    // MARK: metadata

    /// RFC 8414, as Mastodon 4.3 publishes it.
    static func metadata(_ site: String) -> [UInt8] {
        func list(_ values: [String]) -> String {
            "[" + values.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        }
        var json = PHPJSONWriter()
        json.raw("{\"issuer\":")
        json.string(site)
        for (name, path) in [("authorization_endpoint", "oauth/authorize"), ("token_endpoint", "oauth/token"),
                             ("revocation_endpoint", "oauth/revoke"), ("app_registration_endpoint", "api/v1/apps")] {
            json.raw(json: ",\"\(name)\":")
            json.string(site + path)
        }
        json.raw(json: ",\"service_documentation\":\"https://docs.joinmastodon.org/\"")
        json.raw(json: ",\"scopes_supported\":" + list(OAuthScope.all.map(\.name)))
        json.raw(json: ",\"response_types_supported\":[\"code\"],\"response_modes_supported\":[\"query\"]")
        json.raw(json: ",\"grant_types_supported\":[\"authorization_code\",\"password\",\"client_credentials\"]")
        json.raw(json: ",\"token_endpoint_auth_methods_supported\":[\"client_secret_basic\",\"client_secret_post\"]")
        json.raw(json: ",\"code_challenge_methods_supported\":" + list(PKCEMethod.allCases.map(\.rawValue)) + "}")
        return json.bytes
    }

    // MARK: accounts

    /// `POST /api/v1/accounts`: an app (its own token) registers a person
    /// through the `register` command (its rules and throttle) and gets a
    /// token for them with its own token's scopes. The session `register`
    /// starts is ended at once: the answer is the token.
    private func registerAccount(_ call: MastodonCall, _ api: MastodonAPI) throws -> MastodonAnswer {
        guard let grant = call.grant, grant.userID == nil, let app = try api.services.oauth.app(id: grant.appID) else {
            throw MastodonError(status: 403, message: "This method requires an app token")
        }
        guard call.parameters.bool("agreement") == true else {
            throw MastodonError(status: 422, message: "Validation failed: Agreement must be accepted")
        }
        let typed = call.parameters.bytes("password") ?? []
        let context = call.commandContext()
        let output = try call.run("register", CommandArguments(fields: [
            "username": call.parameters.bytes("username") ?? [], "password": typed.isEmpty ? [] : AppPassword.derived(fromTyped: typed),
        ]), in: context)
        if case .started(let id)? = context.sessionChange { api.services.sessions.destroy(id: id) }
        guard let signedIn = output as? SignedIn else { throw MastodonError.unavailable }
        let issued = try api.services.oauthServer.issueToken(app: app, userID: signedIn.user.id, scope: grant.scopes.description)
        return .json(Self.token(issued))
    }
}
