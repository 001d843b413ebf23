import Testing
@testable import IReporterKit

/// The OAuth endpoints through the Mastodon router on the in-memory stores,
/// with tokens checked by `OAuthAccessTokens` and a `ManualClock`.
struct OAuthEndpointsTests {
    let harness: AppHarness
    let mastodon: MastodonAPI
    let wallClock = ManualClock(Instant(millis: 1_700_000_000_000))
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    init(rateLimit: Int = 300, followRateLimit: Int? = nil) throws {
        harness = try AppHarness(hashesPasswords: false)
        var services = harness.services
        if let followRateLimit { services.policy.followRateLimit = followRateLimit }
        services.wallClock = wallClock
        services.oauth = InMemoryOAuthStore(users: harness.users)
        services.accessTokens = OAuthAccessTokens(server: services.oauthServer, counters: services.counters)
        services.policy.mastodonRateLimit = rateLimit
        mastodon = MastodonAPI(api: IReporterAPI(services: services))
        // bob's typed password is "pw": every client sends the app's value of it.
        try harness.send([("command", "register"), ("username", "bob"),
                          ("password", String(decoding: AppPassword.derived(fromTyped: Array("pw".utf8)), as: UTF8.self))])
    }

    func call(_ method: HTTPMethod, _ path: String, _ fields: [(String, String)] = [], token: String? = nil,
              headers: [String: String] = [:], crossOrigin: Bool = false) -> MastodonAnswer {
        var form = FormData()
        for (name, value) in fields { form.setField(Array(name.utf8), Array(value.utf8)) }
        let parameters = method == .get ? MastodonParameters(query: form) : MastodonParameters(query: FormData(), body: form)
        return mastodon.answer(MastodonRequest(method: method, path: path, parameters: parameters,
                                               authorization: token.map { "Bearer \($0)" }, clientAddress: "192.0.2.7",
                                               isCrossOrigin: crossOrigin, siteURL: "https://photos.example/",
                                               headers: { headers[$0] }))
    }

    func json(_ answer: MastodonAnswer) throws -> [String: JSONValue] {
        guard case .object(let members) = try JSONParser.parse(answer.body) else { throw MastodonError.notFound }
        return Dictionary(members, uniquingKeysWith: { first, _ in first })
    }

    func text(_ answer: MastodonAnswer, _ key: String) throws -> String? {
        guard case .string(let bytes)? = try json(answer)[key] else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    func app(redirect: String = "https://client.example/cb", scopes: String = "read write") throws -> (id: String, secret: String) {
        let answer = call(.post, "/api/v1/apps", [("client_name", "Client"), ("redirect_uris", redirect), ("scopes", scopes)])
        #expect(answer.status == 200)
        return (try #require(try text(answer, "client_id")), try #require(try text(answer, "client_secret")))
    }

    func passwordToken(_ app: (id: String, secret: String), scope: String) throws -> String {
        let answer = call(.post, "/oauth/token", [("grant_type", "password"), ("client_id", app.id), ("client_secret", app.secret),
                                                  ("username", "bob"), ("password", "pw"), ("scope", scope)])
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        return try #require(try text(answer, "access_token"))
    }

    /// From a review: an app's name is shown on the consent page, and a
    /// right-to-left override in it turned the page's sentence around.
    @Test func anAppsNameFollowsATitlesRules() throws {
        for (name, problem) in [("\u{202E}tneilC", "cannot contain control or invisible characters"),
                                ("Cli\u{200B}ent", "cannot contain control or invisible characters"),
                                ("\u{2800}", "can't be blank")] {
            let refused = call(.post, "/api/v1/apps", [("client_name", name), ("redirect_uris", "https://client.example/cb")])
            #expect(try refused.status == 422 && text(refused, "error") == "Validation failed: Application name \(problem)",
                    "\(String(decoding: refused.body, as: UTF8.self))")
        }
        for (field, value, label) in [("website", "https://\u{202E}moc.elpmaxe", "Website"),
                                      ("redirect_uris", "https://client.example/\u{202E}bc", "Redirect URI")] {
            let fields = [("client_name", "Client"), ("redirect_uris", "https://client.example/cb")].filter { $0.0 != field }
            let refused = call(.post, "/api/v1/apps", fields + [(field, value)])
            #expect(try text(refused, "error") == "Validation failed: \(label) cannot contain control or invisible characters")
        }
        var form = FormData()
        form.setField(Array("client_name".utf8), [0xC3, 0x28])
        form.setField(Array("redirect_uris".utf8), Array("https://client.example/cb".utf8))
        let notUTF8 = mastodon.answer(MastodonRequest(method: .post, path: "/api/v1/apps",
                                                      parameters: MastodonParameters(query: FormData(), body: form),
                                                      clientAddress: "192.0.2.7", siteURL: "https://photos.example/"))
        #expect(try text(notUTF8, "error") == "Validation failed: Application name must be UTF-8 text")
    }

    @Test func aReadTokenCannotPost() throws {
        let token = try passwordToken(try app(), scope: "read")
        #expect(call(.get, "/api/v1/apps/verify_credentials", token: token).status == 200)
        let post = call(.post, "/api/v1/statuses", [("status", "hello")], token: token)
        #expect(post.status == 403)
        #expect(String(decoding: post.body, as: UTF8.self) == #"{"error":"This action is outside the authorized scopes"}"#)
        #expect(call(.get, "/api/v1/apps/verify_credentials", token: token + "x").status == 401)
    }

    /// Anyone may register an app whose redirect URI is any site: a
    /// request it gets wrong is told on our page, with a link back the
    /// person may follow, never a redirect on its own (an open redirector
    /// of this site's links otherwise).
    @Test func aBadRequestIsShownHereWithALinkBackNotRedirected() throws {
        let client = try app(redirect: "https://evil.example/login")
        for wrong in [("response_type", "x"), ("scope", "nope")] {
            var query = [("response_type", "code"), ("client_id", client.id), ("state", "s&1")]
            query.removeAll { $0.0 == wrong.0 }
            let page = call(.get, "/oauth/authorize", query + [wrong])
            #expect(page.status == 400 && page.contentType.hasPrefix("text/html"), "\(wrong)")
            #expect(!page.headers.contains { $0.name == "Location" })
            let html = String(decoding: page.body, as: UTF8.self)
            #expect(html.contains(#"<a href="https://evil.example/login?error="#) && html.contains("&amp;state=s%261\">Return to Client</a>"),
                    "\(html)")
            #expect(page.headers.contains { $0.name == "X-Frame-Options" && $0.value == "DENY" })
        }
        let posted = call(.post, "/oauth/authorize", [("response_type", "x"), ("client_id", client.id), ("action", "authorize")],
                          crossOrigin: true)
        #expect(posted.status == 400 && !posted.headers.contains { $0.name == "Location" }, "another site's form alike")
    }

    @Test func theCodeFlowThroughThePageWithPKCE() throws {
        let client = try app()
        let query = [("response_type", "code"), ("client_id", client.id), ("redirect_uri", "https://client.example/cb"),
                     ("scope", "read"), ("state", "s1"), ("code_challenge", Self.challenge), ("code_challenge_method", "S256")]
        let page = call(.get, "/oauth/authorize", query)
        #expect(page.status == 200 && page.contentType.hasPrefix("text/html"))
        let policy = try #require(page.headers.first { $0.name == "Content-Security-Policy" }?.value)
        #expect(policy.contains("form-action 'self' https://client.example:443") && policy.contains("frame-ancestors 'none'"))
        #expect(String(decoding: page.body, as: UTF8.self).contains(#"<input type="hidden" name="code_challenge" value="\#(Self.challenge)">"#))

        #expect(call(.post, "/oauth/authorize", query + [("action", "login"), ("username", "bob"), ("password", "nope")]).status == 422)
        let consent = call(.post, "/oauth/authorize", query + [("action", "login"), ("username", "bob"), ("password", "pw")])
        #expect(consent.status == 200 && String(decoding: consent.body, as: UTF8.self).contains("Signed in as <strong>bob</strong>"))
        let cookie = try #require(consent.headers.first { $0.name == "Set-Cookie" }?.value.split(separator: ";").first)
        #expect(call(.post, "/oauth/authorize", query + [("action", "authorize")], headers: ["HTTP_COOKIE": String(cookie)],
                     crossOrigin: true).status == 403, "another site's page cannot authorize")
        let redirect = call(.post, "/oauth/authorize", query + [("action", "authorize")], headers: ["HTTP_COOKIE": String(cookie)])
        let location = try #require(redirect.headers.first { $0.name == "Location" }?.value)
        #expect(redirect.status == 302 && location.hasPrefix("https://client.example/cb?code=") && location.hasSuffix("&state=s1"))
        let code = String(location.dropFirst("https://client.example/cb?code=".count).prefix { $0 != "&" })

        let exchange = [("grant_type", "authorization_code"), ("client_id", client.id), ("client_secret", client.secret),
                        ("code", code), ("redirect_uri", "https://client.example/cb")]
        let wrong = call(.post, "/oauth/token", exchange + [("code_verifier", String(Self.verifier.dropLast()) + "A")])
        #expect(wrong.status == 400)
        #expect(try text(wrong, "error") == "invalid_grant")
        let token = call(.post, "/oauth/token", exchange + [("code_verifier", Self.verifier)])
        #expect(token.status == 200)
        #expect(try text(token, "scope") == "read" && text(token, "token_type") == "Bearer")
        #expect(call(.post, "/oauth/token", exchange + [("code_verifier", Self.verifier)]).status == 400, "once")
    }

    /// An app adding a second account (`force_login`), or a person who is
    /// not the one signed in, gets the login form.
    @Test func anotherAccountCanSignInOverTheWebSession() throws {
        let client = try app()
        let query = [("response_type", "code"), ("client_id", client.id), ("redirect_uri", "https://client.example/cb")]
        let consent = call(.post, "/oauth/authorize", query + [("action", "login"), ("username", "bob"), ("password", "pw")])
        let cookie = String(try #require(consent.headers.first { $0.name == "Set-Cookie" }?.value.split(separator: ";").first))
        func page(_ answer: MastodonAnswer) -> String { String(decoding: answer.body, as: UTF8.self) }
        #expect(page(call(.get, "/oauth/authorize", query, headers: ["HTTP_COOKIE": cookie])).contains("Signed in as <strong>bob</strong>"))
        #expect(page(call(.get, "/oauth/authorize", query)).contains(#"name="password""#), "no one signed in")
        let forced = page(call(.get, "/oauth/authorize", query + [("force_login", "true")], headers: ["HTTP_COOKIE": cookie]))
        #expect(forced.contains(#"name="password""#) && !forced.contains("Signed in as"))
        let switched = page(call(.post, "/oauth/authorize", query + [("action", "switch")], headers: ["HTTP_COOKIE": cookie]))
        #expect(switched.contains(#"name="password""#) && !switched.contains("Signed in as"))
    }

    @Test func anUnregisteredRedirectIsRefusedOnOurPage() throws {
        let client = try app()
        let page = call(.get, "/oauth/authorize", [("response_type", "code"), ("client_id", client.id),
                                                  ("redirect_uri", "https://evil.example/cb")])
        #expect(page.status == 400 && !page.headers.contains { $0.name == "Location" })
    }

    @Test func clientAuthenticationAndErrorsAsRFC6749() throws {
        let client = try app()
        // Standard base64, as HTTP Basic has it.
        let basic = Base64.urlSafeEncode(Array("\(client.id):\(client.secret)".utf8))
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        #expect(call(.post, "/oauth/token", [("grant_type", "client_credentials")],
                     headers: ["HTTP_AUTHORIZATION": "Basic \(basic)"]).status == 200)
        let bad = call(.post, "/oauth/token", [("grant_type", "client_credentials"), ("client_id", client.id), ("client_secret", "x")])
        #expect(bad.status == 401)
        #expect(try text(bad, "error") == "invalid_client")
        #expect(try text(call(.post, "/oauth/token", [("grant_type", "implicit")]), "error") == "unsupported_grant_type")
        #expect(try text(call(.post, "/oauth/token", []), "error_description") == "Missing required parameter: grant_type.")
    }

    /// A wrong password is the grant's error; the throttle that follows is
    /// a 429, as from every other door, so that a client backs off.
    @Test func aThrottledPasswordGrantIsA429() throws {
        let client = try app()
        let answers = (0..<8).map { _ in
            call(.post, "/oauth/token", [("grant_type", "password"), ("client_id", client.id), ("client_secret", client.secret),
                                         ("username", "bob"), ("password", "wrong")])
        }
        #expect(answers[0].status == 400)
        #expect(try text(answers[0], "error") == "invalid_grant")
        let throttled = try #require(answers.last)
        #expect(throttled.status == 429, "\(String(decoding: throttled.body, as: UTF8.self))")
        #expect(try text(throttled, "error")?.hasPrefix("Too many failed logins, try again in ") == true)
    }

    @Test func revokedTokensAndAuthorizedApps() throws {
        let client = try app()
        let token = try passwordToken(client, scope: "read")
        #expect(call(.post, "/oauth/revoke", [("client_id", client.id), ("client_secret", client.secret), ("token", token)]).status == 200)
        #expect(call(.get, "/api/v1/apps/verify_credentials", token: token).status == 401)
    }

    /// From a review: Mastodon.py sends its last token with every request,
    /// /oauth/token included. Mastodon does not look at it there (nor on app
    /// registration or the instance), so a client whose token was revoked
    /// signs in again; here each answered 401.
    @Test func aRevokedTokenStillSentDoesNotKeepItsClientFromSigningInAgain() throws {
        let client = try app()
        let stale = try passwordToken(client, scope: "read")
        let credentials = [("client_id", client.id), ("client_secret", client.secret)]
        #expect(call(.post, "/oauth/revoke", credentials + [("token", stale)]).status == 200)

        #expect(call(.get, "/api/v1/instance", token: stale).status == 200)
        #expect(call(.post, "/api/v1/apps", [("client_name", "Again"), ("redirect_uris", "urn:ietf:wg:oauth:2.0:oob")],
                     token: stale).status == 200)
        let again = call(.post, "/oauth/token", credentials + [("grant_type", "password"), ("username", "bob"), ("password", "pw"),
                                                              ("scope", "read")], token: stale)
        #expect(again.status == 200, "\(String(decoding: again.body, as: UTF8.self))")
        #expect(call(.post, "/oauth/revoke", credentials + [("token", stale)], token: stale).status == 200)
        // Where Mastodon checks a token that is sent, it still is.
        #expect(call(.get, "/api/v1/timelines/public", token: stale).status == 401)
    }

    /// From a review: a public endpoint took any valid token and read as
    /// its user (their likes shown) whatever its scopes. Mastodon answers a
    /// token that does not cover reading there with 403.
    @Test func aTokenSentToAPublicEndpointMustCoverReadingIt() throws {
        let client = try app(scopes: "read write profile")
        let profile = try passwordToken(client, scope: "profile")
        let writer = try passwordToken(client, scope: "write")
        let reader = try passwordToken(client, scope: "read:statuses")
        for path in ["/api/v1/timelines/public", "/api/v1/accounts/1/statuses"] {
            #expect(call(.get, path).status == 200, "no token: public")
            #expect(call(.get, path, token: reader).status == 200)
            for token in [profile, writer] {
                let refused = call(.get, path, token: token)
                #expect(refused.status == 403, "\(path)")
                #expect(try text(refused, "error") == "This action is outside the authorized scopes")
            }
        }
        #expect(call(.get, "/api/v1/accounts/1", token: reader).status == 403, "read:accounts it is not")
        #expect(call(.get, "/api/v1/accounts/verify_credentials", token: profile).status == 200, "what profile is for")
    }

    /// From a review: each revocation bumped the stream generation, which
    /// every cache of every worker is kept under, so anyone could keep them
    /// cold by revoking one token over and over (or replaying a used code).
    @Test func onlyALiveTokenRevokedFlushesTheCaches() throws {
        let client = try app()
        let token = try passwordToken(client, scope: "read")
        let revoke = { call(.post, "/oauth/revoke", [("client_id", client.id), ("client_secret", client.secret), ("token", token)]) }
        let before = try harness.services.counters.streamGeneration
        #expect(revoke().status == 200)
        let revoked = try harness.services.counters.streamGeneration
        #expect(revoked > before, "the kept answers of its user may hold what the token saw")
        for _ in 0..<3 { #expect(revoke().status == 200) }
        #expect(try harness.services.counters.streamGeneration == revoked)
    }

    @Test func theRateLimitIsCountedPerTokenAndTold() throws {
        let limited = try OAuthEndpointsTests(rateLimit: 2)
        let first = limited.call(.get, "/api/v1/instance/peers")
        #expect(first.headers.first { $0.name == "X-RateLimit-Remaining" }?.value == "1")
        #expect(first.headers.first { $0.name == "X-RateLimit-Reset" }?.value == MastodonTime.iso8601(1_700_000_000 + 300))
        #expect(limited.call(.get, "/api/v1/instance/peers").status == 200)
        let refused = limited.call(.get, "/api/v1/instance/peers")
        #expect(refused.status == 429 && refused.headers.contains { $0.name == "X-RateLimit-Limit" && $0.value == "2" })
        limited.harness.clock.advance(bySeconds: 300)
        #expect(limited.call(.get, "/api/v1/instance/peers").status == 200, "a new window")
    }

    /// A network's anonymous reads past the limit leave its signing in alone
    /// (a count of its own, limited too).
    @Test func signingInHasItsOwnCount() throws {
        let limited = try OAuthEndpointsTests(rateLimit: 2)
        let client = try limited.app()
        for _ in 0..<3 { _ = limited.call(.get, "/api/v1/instance/peers") }
        #expect(limited.call(.get, "/api/v1/instance/peers").status == 429)
        let grant = [("grant_type", "password"), ("client_id", client.id), ("client_secret", client.secret),
                     ("username", "bob"), ("password", "pw"), ("scope", "read")]
        #expect(limited.call(.post, "/oauth/token", grant).status == 200, "the app's registration and this: 2")
        #expect(limited.call(.post, "/oauth/token", grant).status == 429, "its own count is limited too")
    }

    /// A command's own limit (follows an hour) refuses with 429 but without
    /// the request limit's headers, which would have a client retry when
    /// that window ends, minutes away, with hundreds of requests "remaining".
    @Test func aCommandsOwnLimitIsNotToldAsTheRequestLimit() throws {
        let limited = try OAuthEndpointsTests(rateLimit: 100, followRateLimit: 1)
        for name in ["alice", "carol"] { try limited.harness.send([("command", "register"), ("username", name), ("password", "p")]) }
        let token = try limited.passwordToken(try limited.app(scopes: "read write follow"), scope: "read write follow")
        let followed = limited.call(.post, "/api/v1/accounts/2/follow", token: token)
        #expect(followed.status == 200 && followed.headers.contains { $0.name == "X-RateLimit-Remaining" })
        let refused = limited.call(.post, "/api/v1/accounts/3/follow", token: token)
        #expect(refused.status == 429)
        #expect(!refused.headers.contains { $0.name.hasPrefix("X-RateLimit") }, "\(refused.headers)")
    }

    /// Per account whichever token it uses; an app's own tokens (anyone
    /// may make any number) count with their network, as no token does.
    @Test func theRateLimitIsPerAccountAndAppTokensShareTheirNetworks() throws {
        let limited = try OAuthEndpointsTests(rateLimit: 3)
        let client = try limited.app()
        let phone = try limited.passwordToken(client, scope: "read"), tablet = try limited.passwordToken(client, scope: "read")
        limited.harness.clock.advance(bySeconds: 300)
        let appToken = try #require(try limited.text(limited.call(.post, "/oauth/token", [
            ("grant_type", "client_credentials"), ("client_id", client.id), ("client_secret", client.secret)]), "access_token"))
        #expect(limited.call(.get, "/api/v1/instance/peers", token: appToken).status == 200)
        #expect(limited.call(.get, "/api/v1/instance/peers").status == 200)
        #expect(limited.call(.get, "/api/v1/instance/peers").status == 200, "the token's own request counted with the signing in")
        #expect(limited.call(.get, "/api/v1/instance/peers").status == 429, "the app's token counted with its network")
        #expect(limited.call(.get, "/api/v1/accounts/verify_credentials", token: phone).status == 200, "bob's own count")
        #expect(limited.call(.get, "/api/v1/accounts/verify_credentials", token: tablet).status == 200)
        #expect(limited.call(.get, "/api/v1/accounts/verify_credentials", token: phone).status == 200)
        #expect(limited.call(.get, "/api/v1/accounts/verify_credentials", token: tablet).status == 429, "bob's two tokens count as one")
    }

    @Test func theInstanceSaysOurLimits() throws {
        let instance = call(.get, "/api/v2/instance")
        let body = String(decoding: instance.body, as: UTF8.self)
        // Before 4.3: clients that see 4.3 or its `api_versions` use only grouped notifications, which we lack.
        #expect(body.contains(#""version":"4.2.0 (compatible; iReporter "#))
        #expect(!body.contains("api_versions"))
        #expect(body.contains(#""image_size_limit":20971520"#) && body.contains(#""max_characters":100"#))
        // A URL, as strict decoders require, though nothing streams there.
        #expect(body.contains(#""urls":{"streaming":"wss:\/\/photos.example"}"#))
        #expect(String(decoding: call(.get, "/api/v1/instance").body, as: UTF8.self)
                    .contains(#""urls":{"streaming_api":"wss:\/\/photos.example"}"#))
        #expect(String(decoding: call(.get, "/nodeinfo/2.0").body, as: UTF8.self).contains(#""users":{"total":1}"#))
    }
}
