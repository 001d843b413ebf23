import Testing
@testable import IReporterKit

/// What the scoreboard says of the request a worker serves: the watchdog's
/// kill line, a crash's line, an error line and `?full` read it.
struct ScoreboardTests {
    @Test func aRequestsNoteNamesItWithItsSecretsFiltered() {
        let scoreboard = Scoreboard()
        scoreboard.noteRequest(3, requestID: "4f2a", client: "192.0.2.7", method: "GET",
                               uri: "/api/v1/timelines/home?access_token=secret&limit=5")
        let note = scoreboard.request(3)
        #expect(note.description == "GET /api/v1/timelines/home?access_token=FILTERED&limit=5 (request 4f2a, client 192.0.2.7)")
        #expect((note.method, note.uri) == ("GET", "/api/v1/timelines/home?access_token=FILTERED&limit=5"))
        #expect(scoreboard.request(4).description == "-", "a slot that noted nothing")
    }

    /// A slot holds 255 bytes: a long URI is what is cut, never the id or the client.
    @Test func aLongURIIsCutNotTheRest() {
        let scoreboard = Scoreboard()
        scoreboard.noteRequest(0, requestID: "abc", client: "2001:db8::1", method: "POST", uri: "/" + String(repeating: "x", count: 1000))
        let note = scoreboard.request(0)
        #expect(note.description.hasPrefix("POST /xxx") && note.description.hasSuffix("(request abc, client 2001:db8::1)"))
        #expect(note.uri.utf8.count == 255 - "abc".utf8.count - "2001:db8::1".utf8.count - "POST".utf8.count - 3)
        scoreboard.noteRequest(0, requestID: "def", client: "-", method: "GET", uri: "/iReporter/")
        #expect(scoreboard.request(0).description == "GET /iReporter/ (request def, client -)", "the next request's note replaces it")
    }
}
