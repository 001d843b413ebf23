import Testing
@testable import IReporterKit

/// The Mastodon-compatible door's shared steps: routes and their path
/// parameters, tokens and scopes, parameters however they were sent, the
/// declared commands run as a token's user, errors in Mastodon's shape.
struct MastodonRouterTests {
    let harness: AppHarness
    let mastodon: MastodonAPI

    init() throws {
        harness = try AppHarness(hashesPasswords: false)
        mastodon = MastodonAPI(api: harness.api)
    }

    func token(_ scopes: String, user: Int64? = 1) -> String {
        harness.tokens.issue(AccessGrant(userID: user, appID: 1, scopes: OAuthScopes(parsing: scopes)!))
    }

    func get(_ path: String, token: String? = nil, query: String = "") -> MastodonAnswer {
        mastodon.answer(MastodonRequest(method: .get, path: path,
                                        parameters: MastodonParameters(query: URLEncodedForm.parse(Array(query.utf8))),
                                        authorization: token.map { "Bearer \($0)" }))
    }

    func text(_ answer: MastodonAnswer) -> String { String(decoding: answer.body, as: UTF8.self) }

    @Test func anUnknownPathIsMastodonsNotFound() {
        let answer = get("/api/v1/nothing-here")
        #expect(answer.status == 404)
        #expect(text(answer) == #"{"error":"Record not found"}"#)
    }

    @Test func aScopedRouteWantsAValidToken() {
        #expect(get("/api/v1/lists").status == 401)
        #expect(text(get("/api/v1/lists", token: "made-up")) == #"{"error":"The access token is invalid"}"#)
        #expect(text(get("/api/v1/lists", token: token("read"))) == "[]")
        #expect(text(get("/api/v1/lists", token: token("read:lists"))) == "[]")
    }

    @Test func aTokenWithoutTheScopeIsRefused() {
        let answer = get("/api/v1/lists", token: token("write"))
        #expect(answer.status == 403)
        #expect(text(answer) == #"{"error":"This action is outside the authorized scopes"}"#)
        #expect(get("/api/v1/lists", token: token("read:statuses")).status == 403)
        // `follow` covers the follow graph's sub-scopes, nothing else.
        #expect(get("/api/v1/blocks", token: token("follow")).status == 200)
        #expect(get("/api/v1/lists", token: token("follow")).status == 403)
    }

    @Test func aPublicRouteTakesNoTokenButRefusesABadOne() {
        #expect(text(get("/api/v1/custom_emojis")) == "[]")
        #expect(get("/api/v1/custom_emojis", token: "made-up").status == 401)
    }

    @Test func theTokenMayComeAsAParameter() {
        #expect(get("/api/v1/lists", query: "access_token=\(token("read"))").status == 200)
    }

    @Test func makingWhatWeLackIsRefusedClearly() {
        let answer = mastodon.answer(MastodonRequest(method: .post, path: "/api/v1/lists", authorization: "Bearer \(token("write"))"))
        #expect(answer.status == 422)
        #expect(text(answer) == #"{"error":"Lists are not supported by this server"}"#)
        #expect(get("/api/v1/polls/7").status == 404)
        let profile = mastodon.answer(MastodonRequest(method: .patch, path: "/api/v1/accounts/update_credentials",
                                                      authorization: "Bearer \(token("write"))"))
        #expect(profile.status == 422 && text(profile) == #"{"error":"Editing a profile is not supported by this server"}"#)
        // Not "Record not found", which apps show as a missing account.
        for (path, what) in [("note", "Private notes on accounts are"), ("remove_from_followers", "Removing a follower is")] {
            let answer = mastodon.answer(MastodonRequest(method: .post, path: "/api/v1/accounts/1/\(path)",
                                                         authorization: "Bearer \(token("write"))"))
            #expect(answer.status == 422 && text(answer) == #"{"error":""# + what + #" not supported by this server"}"#)
        }
    }

    @Test func scopesParseAsMastodonsAndNothingElse() {
        #expect(OAuthScopes(parsing: "read write:media follow")?.description == "read write:media follow")
        #expect(OAuthScopes(parsing: "")?.description == "read")
        #expect(OAuthScopes(parsing: "read admin:everything") == nil)
        #expect(OAuthScopes(parsing: "read read")?.scopes.count == 1)
        #expect(OAuthScope.write.covers(OAuthScope("write:statuses")!))
        #expect(!OAuthScope("write:media")!.covers(.write))
        #expect(!OAuthScope.read.covers(OAuthScope("write:statuses")!))
    }

    @Test func listsComeAsBracketedFieldsOrJSONArrays() throws {
        let form = MastodonParameters(query: URLEncodedForm.parse(Array("id[]=3&id[]=4&limit=5".utf8)))
        #expect(form.strings("id") == ["3", "4"])
        #expect(try form.integer("limit") == 5)
        let json = try MastodonParameters(query: FormData(),
                                          json: JSONParser.parse(Array(#"{"media_ids":["7"],"sensitive":true,"status":"Hi"}"#.utf8)))
        #expect(json.strings("media_ids") == ["7"])
        #expect(json.bool("sensitive") == true)
        #expect(json.string("status") == "Hi")
        #expect(json.strings("status") == ["Hi"])
        // An object's members are read as a form names them (toot and the web clients send markers so).
        let nested = try MastodonParameters(query: FormData(), json: JSONParser.parse(Array(
            #"{"home":{"last_read_id":"12"},"poll":{"options":["a","b"]},"x":{"y":{"z":1}}}"#.utf8)))
        #expect(nested.string("home[last_read_id]") == "12")
        #expect(nested.strings("poll[options]") == ["a", "b"])
        #expect(nested.string("x[y]") == nil, "deeper than one level: not read")
        #expect(throws: MastodonError.self) { try MastodonParameters(query: FormData(), json: JSONParser.parse(Array("[1]".utf8))) }
        #expect(throws: MastodonError.self) { try form.integer("id") == nil && MastodonParameters(
            query: URLEncodedForm.parse(Array("limit=-1".utf8))).integer("limit") == nil }
    }

    @Test func theBearerSchemeIsReadInAnyCase() {
        #expect(MastodonRequest.bearer("Bearer abc") == Array("abc".utf8))
        #expect(MastodonRequest.bearer("bearer  abc") == Array("abc".utf8))
        #expect(MastodonRequest.bearer("Basic abc") == nil)
        #expect(MastodonRequest.bearer("Bearer ") == nil)
    }

    @Test func declaredCommandsRunAsTheTokensUser() throws {
        try harness.send([("command", "register"), ("username", "alice"), ("password", "p")])
        _ = try harness.photos.add(userID: 1, title: Array("t".utf8), publish: { _ in }, unpublish: { _ in })
        var router = MastodonRouter(tokens: harness.tokens, commands: harness.api.router)
        router.add(.post, "/test/:id/like", scope: .write) { call in
            _ = try call.run("like", ["IdPhoto": String(try call.id())])
            return .emptyObject
        }
        let alice = token("write", user: 1)
        #expect(router.answer(MastodonRequest(method: .post, path: "/test/2/like", authorization: "Bearer \(alice)")).status == 200)
        #expect(harness.photos.votes.count == 1)
        // A command's failure, in Mastodon's shape: the photo is not there.
        let missing = router.answer(MastodonRequest(method: .post, path: "/test/999/like", authorization: "Bearer \(alice)"))
        #expect(missing.status == 404)
        #expect(text(missing) == #"{"error":"Record not found"}"#)
        // An id that is no number is no record either.
        #expect(router.answer(MastodonRequest(method: .post, path: "/test/x/like", authorization: "Bearer \(alice)")).status == 404)
        // An app's own token has no user.
        let app = router.answer(MastodonRequest(method: .post, path: "/test/2/like",
                                                authorization: "Bearer \(token("write", user: nil))"))
        #expect(app.status == 401)
        #expect(text(app) == #"{"error":"Authorization required"}"#)
    }
}
