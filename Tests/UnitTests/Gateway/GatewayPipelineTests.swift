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
        APIResponder(api: IReporterAPI(services: services), uploadDirectory: "/nonexistent", maxUploadBytes: 1 << 20,
                     flickr: FlickrResponder(api: FlickrAPI(services: services)))
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
}
