import Testing
@testable import IReporterKit
import TestSupport

/// `/api/v1/markers` on the in-memory stores, through the declared commands
/// `markers` and `mark`: what one app marks, another reads, and the form API too.
struct MastodonMarkersTests {
    /// bob (1) and alice (2).
    let door: MastodonStatusesTests

    init() throws { door = try MastodonStatusesTests() }

    func body(_ answer: MastodonAnswer) -> String { String(decoding: answer.body, as: UTF8.self) }

    @Test func whatOneAppMarksAnotherReads() throws {
        let phone = door.token(), tablet = door.token()
        #expect(body(door.call(.get, "/api/v1/markers", token: phone, [("timeline[]", "home")])) == "{}", "nothing marked yet")
        let set = door.call(.post, "/api/v1/markers", token: phone, [("home[last_read_id]", "12"), ("notifications[last_read_id]", "3")])
        #expect(body(set) == #"{"home":{"last_read_id":"12","version":1,"updated_at":"2023-11-14T22:13:20.000Z"},"#
                + #""notifications":{"last_read_id":"3","version":1,"updated_at":"2023-11-14T22:13:20.000Z"}}"#)
        door.wallClock.advance(byMillis: 5_000)
        #expect(body(door.call(.post, "/api/v1/markers", token: tablet, [("home[last_read_id]", "15")]))
                == #"{"home":{"last_read_id":"15","version":2,"updated_at":"2023-11-14T22:13:25.000Z"}}"#)
        let read = door.call(.get, "/api/v1/markers", token: phone, [("timeline[]", "notifications"), ("timeline[]", "home"), ("timeline[]", "x")])
        #expect(body(read) == #"{"home":{"last_read_id":"15","version":2,"updated_at":"2023-11-14T22:13:25.000Z"},"#
                + #""notifications":{"last_read_id":"3","version":1,"updated_at":"2023-11-14T22:13:20.000Z"}}"#)
        // As Mastodon: no timeline asked, none answered.
        #expect(body(door.call(.get, "/api/v1/markers", token: phone)) == "{}")
        // The form API reads the same markers.
        let form = try door.harness.body([("command", "markers"), ("timelines", "home")]) // as alice, registered last
        #expect(form == #"{"result":[{"timeline":"home","last_read_id":"15","version":"2","updated":"1700000005"}]}"#)
        // Each person their own.
        #expect(body(door.call(.get, "/api/v1/markers", token: door.token(user: 1), [("timeline[]", "home")])) == "{}")
    }

    @Test func refusalsAreMastodons() throws {
        let token = door.token()
        #expect(door.call(.get, "/api/v1/markers", [("timeline[]", "home")]).status == 401)
        #expect(door.call(.post, "/api/v1/markers", token: door.token("read"), [("home[last_read_id]", "1")]).status == 403)
        let notANumber = door.call(.post, "/api/v1/markers", token: token, [("home[last_read_id]", "abc")])
        #expect(notANumber.status == 422 && body(notANumber).contains("Invalid home"), "\(body(notANumber))")
        #expect(body(door.call(.post, "/api/v1/markers", token: token)) == "{}", "nothing to set")
    }

    @Test func beforeTheMigrationNothingIsKept() throws {
        let store = InMemoryReadMarkerStore()
        store.isMigrated = false
        var services = door.harness.services
        services.markers = store
        let api = IReporterAPI(services: services)
        let answer = api.handle(APIRequest(parameters: CommandArguments(fields: ["command": Array("mark".utf8), "home": Array("3".utf8)]),
                                           session: RequestSession(signedIn: SignedInUser(token: 2))))
        #expect(String(decoding: answer.body, as: UTF8.self)
                == #"{"error":"Read markers are kept once the database is migrated (ireporter migrate)"}"#)
        #expect(try store.markers(of: 2, in: MarkerTimeline.allCases).isEmpty)
    }

    @Test func markWithNeitherTimelineSaysBothWouldDo() throws {
        let api = IReporterAPI(services: door.harness.services)
        let answer = api.handle(APIRequest(parameters: CommandArguments(fields: ["command": Array("mark".utf8)]),
                                           session: RequestSession(signedIn: SignedInUser(token: 2))))
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"error":"Missing home or notifications"}"#)
    }

    @Test func anAccountsDeletionTakesItsMarkers() throws {
        #expect(door.call(.post, "/api/v1/markers", token: door.token(), [("home[last_read_id]", "7")]).status == 200)
        try AccountRemoval(door.harness.services).remove(2)
        #expect(try door.harness.services.markers.markers(of: 2, in: MarkerTimeline.allCases).isEmpty)
    }
}
