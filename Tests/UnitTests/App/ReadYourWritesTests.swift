import Testing
@testable import IReporterKit
import TestSupport

/// With replicas, each request (form, JSON-RPC, Flickr, Mastodon) tells the
/// reads whose writes they must show: the signed-in user of its session or
/// token, or nobody; and closes again, answered or not.
struct ReadYourWritesTests {
    final class Recorder: ReadYourWrites {
        var readers: [Int64?] = []
        var open = false

        func beginRequest(reader: @escaping () -> Int64?) {
            #expect(!open, "the previous request was closed")
            open = true
            readers.append(reader())
        }

        func endRequest() { open = false }
    }

    @Test func eachRequestIsToldItsSignedInUser() throws {
        let phone = try AppHarness()
        let recorder = Recorder()
        var services = phone.services
        services.readYourWrites = recorder
        // The scope is the gateway's (`ReplicaReadsMiddleware`): requests go through it.
        let api = IReporterAPI(services: services)
        let gateway = APIResponder(api: api, uploadDirectory: "/nonexistent", maxUploadBytes: 1 << 20,
                                   flickr: FlickrResponder(api: FlickrAPI(services: services)),
                                   mastodon: MastodonResponder(api: MastodonAPI(api: api)))
        func send(_ fields: [(String, String)]) -> String {
            let request = BodyRequest(form: fields, cookie: phone.cookie)
            gateway.respond(to: request)
            phone.cookie = request.setCookie ?? phone.cookie
            return request.answer
        }

        _ = send([("command", "stream")])
        let registered = send([("command", "register"), ("username", "alice"), ("password", "x")])
        _ = send([("command", "stream")])
        gateway.respond(to: BodyRequest(["REQUEST_METHOD": "POST", "REQUEST_URI": "/iReporter/rpc", "CONTENT_TYPE": "application/json",
                                         "HTTP_COOKIE": "PHPSESSID=" + String(decoding: phone.cookie ?? [], as: UTF8.self)],
                                        body: Array(#"{"jsonrpc":"2.0","method":"stream","id":1}"#.utf8)))
        #expect(recorder.readers.count == 4 && !recorder.open)
        #expect(recorder.readers[0] == nil && recorder.readers[1] == nil, "anonymous, and a request that signs in")
        let user = try #require(recorder.readers[2])
        #expect(registered.contains(#""IdUser":"\#(user)""#))
        #expect(recorder.readers[3] == user, "JSON-RPC too")

        gateway.respond(to: BodyRequest(["REQUEST_METHOD": "GET", "REQUEST_URI": "/iReporter/services/rest/",
                                         "QUERY_STRING": "method=flickr.photos.getRecent",
                                         "HTTP_COOKIE": "PHPSESSID=" + String(decoding: phone.cookie ?? [], as: UTF8.self)]))
        #expect(recorder.readers.count == 5 && recorder.readers[4] == nil && !recorder.open, "Flickr's callers have no session")

        // The Mastodon-compatible API's user is its token's, never a cookie's.
        let token = phone.tokens.issue(AccessGrant(userID: 7, appID: 1, scopes: OAuthScopes([.read])))
        gateway.respond(to: BodyRequest(["REQUEST_METHOD": "GET", "REQUEST_URI": "/api/v1/lists", "HTTP_AUTHORIZATION": "Bearer \(token)",
                                         "HTTP_COOKIE": "PHPSESSID=" + String(decoding: phone.cookie ?? [], as: UTF8.self)]))
        gateway.respond(to: BodyRequest(["REQUEST_METHOD": "GET", "REQUEST_URI": "/api/v1/custom_emojis",
                                         "HTTP_COOKIE": "PHPSESSID=" + String(decoding: phone.cookie ?? [], as: UTF8.self)]))
        #expect(recorder.readers.count == 7 && !recorder.open)
        #expect(recorder.readers[5] == 7 && recorder.readers[6] == nil)
    }
}
