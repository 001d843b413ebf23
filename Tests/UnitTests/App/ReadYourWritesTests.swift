import Testing
@testable import IReporterKit
import TestSupport

/// With replicas, each request (form, JSON-RPC, Flickr) tells the reads
/// whose writes they must show: the signed-in user of its session, or
/// nobody; and closes again, answered or not.
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
        let api = IReporterAPI(services: services)

        try phone.send([("command", "stream")], through: api)
        let registered = try phone.body([("command", "register"), ("username", "alice"), ("password", "x")], through: api)
        try phone.send([("command", "stream")], through: api)
        _ = api.handle(jsonRPC: Array(#"{"jsonrpc":"2.0","method":"stream","id":1}"#.utf8),
                       of: APIRequest(parameters: FormData(), sessionCookie: phone.cookie, clientAddress: phone.address))
        #expect(recorder.readers.count == 4 && !recorder.open)
        #expect(recorder.readers[0] == nil && recorder.readers[1] == nil, "anonymous, and a request that signs in")
        let user = try #require(recorder.readers[2])
        #expect(registered.contains(#""IdUser":"\#(user)""#))
        #expect(recorder.readers[3] == user, "JSON-RPC too")

        let flickr = FlickrAPI(services: services)
        _ = flickr.handle(["method": Array("flickr.photos.getRecent".utf8)], oauthConsumerKey: nil, siteURL: "http://x/iReporter/")
        #expect(recorder.readers.count == 5 && recorder.readers[4] == nil && !recorder.open, "Flickr's callers have no session")
    }
}
