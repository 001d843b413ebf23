import Testing
@testable import IReporterKit
import TestSupport

/// The gateway's one pipeline: its middlewares in order, the same for the
/// form API, JSON-RPC and Flickr.
struct GatewayPipelineTests {
    final class Trace { var steps: [String] = [] }

    struct Probe: GatewayMiddleware {
        let name: String
        let trace: Trace
        func handle(_ context: GatewayContext, next: (GatewayContext) -> GatewayAnswer) -> GatewayAnswer {
            trace.steps.append(name + ">")
            defer { trace.steps.append("<" + name) }
            return next(context)
        }
    }

    @Test func middlewaresWrapTheRouteOutermostFirst() {
        let trace = Trace()
        let pipeline = GatewayPipeline(middlewares: [Probe(name: "a", trace: trace), Probe(name: "b", trace: trace)])
        let answer = pipeline.run(GatewayContext(ParameterRequest([:]), route: .form)) { _ in
            trace.steps.append("route")
            return GatewayAnswer(body: [1, 2, 3])
        }
        #expect(trace.steps == ["a>", "b>", "route", "<b", "<a"])
        #expect(answer.body == [1, 2, 3] && answer.loggedBytes == 3)
    }

    /// A session store that counts its reads.
    final class CountingSessions: SessionStore {
        let inner = InMemorySessionStore()
        var loads = 0
        func load(id: [UInt8]) throws -> Session? {
            loads += 1
            return try inner.load(id: id)
        }
        func create(_ variables: [(String, PHPValue)], user: Int64) throws -> Session { try inner.create(variables, user: user) }
        func destroy(id: String) { inner.destroy(id: id) }
        func endSessions(of user: Int64, except kept: String?) { inner.endSessions(of: user, except: kept) }
        func sweep() -> Int { inner.sweep() }
    }

    func responder(_ services: AppServices) -> APIResponder {
        let api = IReporterAPI(services: services)
        return APIResponder(api: api, uploadDirectory: "/nonexistent", maxUploadBytes: 1 << 20,
                            flickr: FlickrResponder(api: FlickrAPI(services: services)),
                            mastodon: MastodonResponder(api: MastodonAPI(api: api)))
    }

    @Test func theStepsAreTheLogTheIdTheTimeAndTheReplicaScopeInThatOrder() throws {
        let names = responder(try AppServices.inMemory()).pipeline.middlewares.map { String(describing: type(of: $0)) }
        #expect(names == ["AccessLogMiddleware", "RequestIDMiddleware", "TimingMiddleware", "ReplicaReadsMiddleware"])
    }

    @Test func aRequestsSessionIsReadOnceWhoeverAsks() throws {
        var services = try AppServices.inMemory(policy: AppHarness.cheapPolicy)
        let sessions = CountingSessions()
        services.sessions = sessions
        let recorder = ReadYourWritesTests.Recorder()
        services.readYourWrites = recorder
        let gateway = responder(services)
        let register = BodyRequest(form: [("command", "register"), ("username", "alice"), ("password", "p")])
        gateway.respond(to: register)
        let cookie = try #require(register.setCookie)
        sessions.loads = 0
        // The replica scope asks, the login check asks, myvote asks: one read.
        let vote = BodyRequest(form: [("command", "stream"), ("extras", "myvote")], cookie: cookie)
        let record = gateway.respond(to: vote)
        #expect(record.outcome == "ok" && recorder.readers.last == 1)
        #expect(sessions.loads == 1)
    }

    @Test func theRecordAndTheEchoAreTheSameForEveryRoute() throws {
        let gateway = responder(try AppServices.inMemory(policy: AppHarness.cheapPolicy))
        let id = ["REQUEST_ID": "abc123"]
        let form = BodyRequest(form: [("command", "effects")], extra: id)
        let formRecord = gateway.respond(to: form)
        #expect(form.answer.hasPrefix("X-Request-Id: abc123\r\nContent-Type: application/json\r\n"))
        #expect((formRecord.command, formRecord.outcome, formRecord.requestID) == ("effects", "ok", "abc123"))
        #expect(formRecord.bytes == form.answer.split(separator: "\r\n\r\n", maxSplits: 1)[1].utf8.count)

        let rpc = BodyRequest(["REQUEST_METHOD": "POST", "REQUEST_URI": "/iReporter/rpc", "CONTENT_TYPE": "application/json",
                               "REQUEST_ID": "abc123"], body: Array(#"{"jsonrpc":"2.0","method":"effects","id":1}"#.utf8))
        let rpcRecord = gateway.respond(to: rpc)
        #expect(rpc.answer.hasPrefix("X-Request-Id: abc123\r\n"))
        #expect((rpcRecord.command, rpcRecord.call, rpcRecord.outcome) == ("rpc", "effects", "ok"))

        let flickr = BodyRequest(["REQUEST_METHOD": "GET", "REQUEST_URI": "/iReporter/services/rest/?method=flickr.test.echo",
                                  "QUERY_STRING": "method=flickr.test.echo", "REQUEST_ID": "abc123"])
        let flickrRecord = gateway.respond(to: flickr)
        #expect(flickr.answer.hasPrefix("X-Request-Id: abc123\r\nContent-Type: text/xml"))
        #expect((flickrRecord.command, flickrRecord.call, flickrRecord.outcome) == ("flickr", "flickr.test.echo", "ok"))
        #expect(flickrRecord.bytes == flickr.written.count - "X-Request-Id: abc123\r\n".utf8.count)

        let odd = BodyRequest(form: [("command", "effects")], extra: ["REQUEST_ID": "a b"])
        #expect(gateway.respond(to: odd).requestID == "a%20b" && !odd.answer.contains("X-Request-Id"), "logged, not echoed")
    }

    /// From an on-call review: a photo size's 404 and a readiness page's
    /// 503 (its database down) were logged and counted `ok`, so no alert
    /// saw the outage. The outcome is the answer's status, as the Mastodon API's.
    @Test func aSizesOrAnOperatorPagesFailureIsItsStatusInTheRecord() throws {
        let services = try AppServices.inMemory(policy: AppHarness.cheapPolicy)
        let sizes = PhotoSizeResponder(sizes: PhotoSizes(photos: services.photos, files: UploadFolder(directory: "/nonexistent"),
                                                         policy: services.policy, decodeGate: nil))
        let gateway = APIResponder(api: IReporterAPI(services: services), uploadDirectory: "/nonexistent", maxUploadBytes: 1 << 20,
                                   sizes: sizes)
        let misspelled = BodyRequest(["REQUEST_METHOD": "GET", "REQUEST_URI": "/iReporter/photos//000000/2_0123abcdef_q.jpg"])
        #expect(gateway.respond(to: misspelled).outcome == "http-404")
        for (answer, outcome) in [("Status: 503 Service Unavailable\r\nContent-Type: text/plain\r\n\r\nnot ready", "http-503"),
                                  ("Status: 500 Internal Server Error\r\n\r\n", "http-500"),
                                  ("Status: 200 OK\r\n\r\n", "ok"), ("Content-Type: text/plain\r\n\r\nready", "ok"),
                                  ("Status: 304 Not Modified\r\n\r\n", "ok"), ("Status: 5", "ok")] {
            #expect(APIResponder.outcome(ofCGIAnswer: Array(answer.utf8)) == outcome, "\(answer)")
        }
    }

    /// A body that ends before its `CONTENT_LENGTH` (the client went away
    /// while Apache streamed it to us) is refused: no command runs on a part
    /// of it (a registration with half its password).
    @Test func aBodyCutShortIsRefusedBeforeAnyCommandRuns() throws {
        let gateway = responder(try AppServices.inMemory(policy: AppHarness.cheapPolicy))
        func post(_ uri: String, _ type: String, _ body: String, declaring length: Int) -> BodyRequest {
            let request = BodyRequest(["REQUEST_METHOD": "POST", "REQUEST_URI": uri, "REMOTE_ADDR": "192.0.2.1", "CONTENT_TYPE": type,
                                       "CONTENT_LENGTH": String(length)], body: Array(body.utf8))
            gateway.respond(to: request)
            return request
        }
        let form = "command=register&username=eve&password=abc"
        let urlencoded = "application/x-www-form-urlencoded"
        #expect(post("/iReporter/", urlencoded, form, declaring: form.utf8.count + 20).answer.hasSuffix(#"{"error":"Malformed request"}"#))
        #expect(post("/iReporter/", urlencoded, form, declaring: form.utf8.count).answer.contains(#""username":"eve""#),
                "the whole body: the name was not taken by the cut one")
        let rpc = #"{"jsonrpc":"2.0","method":"effects","id":1}"#
        #expect(post("/iReporter/rpc", "application/json", rpc, declaring: rpc.utf8.count + 5).answer.contains("ended before its Content-Length"))
        let status = #"{"status":"cut"}"#
        let mastodon = post("/api/v1/statuses", "application/json", status, declaring: status.utf8.count + 5)
        #expect(mastodon.answer.hasPrefix("Status: 400") && mastodon.answer.contains("ended before its Content-Length"))
    }

    /// What Rails does for Mastodon's clients: HEAD answered as GET (an
    /// uptime monitor's), a JSON Content-Type with no body read as no
    /// parameters (a favourite sent so).
    @Test func aHeadIsAGetAndAnEmptyJSONBodyHasNoParameters() throws {
        let gateway = responder(try AppServices.inMemory(policy: AppHarness.cheapPolicy))
        let head = BodyRequest(["REQUEST_METHOD": "HEAD", "REQUEST_URI": "/api/v1/instance", "REMOTE_ADDR": "192.0.2.1"])
        gateway.respond(to: head)
        #expect(head.answer.hasPrefix("Status: 200") && head.answer.contains(#""uri":"#), "\(head.answer)")
        let empty = BodyRequest(["REQUEST_METHOD": "POST", "REQUEST_URI": "/api/v1/apps", "REMOTE_ADDR": "192.0.2.1",
                                 "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "0"])
        gateway.respond(to: empty)
        #expect(empty.answer.hasPrefix("Status: 422") && !empty.answer.contains("no JSON"), "\(empty.answer)")
    }
}

/// The Mastodon door's heads: one cache header, the answer's own where it has one.
struct MastodonResponderHeadTests {
    let responder: MastodonResponder

    init() throws {
        responder = MastodonResponder(api: MastodonAPI(api: IReporterAPI(services: try AppServices.inMemory())))
    }

    func lines(_ answer: MastodonAnswer) -> [Substring] {
        String(decoding: responder.head(answer, path: "/api/v1/x"), as: UTF8.self).split(separator: "\r\n")
    }

    @Test func anAnswerIsKeptByNoCacheUnlessItSaysSo() {
        let plain = lines(MastodonAnswer.emptyObject)
        #expect(plain.filter { $0.hasPrefix("Cache-Control:") } == ["Cache-Control: no-store"])
        // A waiting media's file: kept a day by the phone that shows it (two headers, no-store won).
        let media = lines(MastodonAnswer(contentType: "image/jpeg", headers: [("Cache-Control", "private, max-age=86400")], body: [1]))
        #expect(media.filter { $0.hasPrefix("Cache-Control:") } == ["Cache-Control: private, max-age=86400"])
        #expect(media.filter { $0.hasPrefix("X-Content-Type-Options:") }.count == 1)
    }
}
