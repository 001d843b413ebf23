import Testing
@testable import IReporterKit

/// The access log's own words for a request: the outcome's name and any
/// value a client chose, each one field of the line.
struct AccessLogTests {
    @Test func anOutcomeIsTheFailuresNameWhateverItCarries() {
        #expect(LoginCommand.Failure.authorizationFailed.outcome == "authorization-failed")
        #expect(LoginCommand.Failure.tooManyAttempts(seconds: 4).outcome == "too-many-attempts")
        #expect(RegisterCommand.Failure.tooManyRegistrations(seconds: 60).outcome == "too-many-registrations")
        #expect(AuthorizationRequired().outcome == "authorization-required")
        #expect(ServiceUnavailable().outcome == "service-unavailable")
    }

    @Test func aClientsValueCannotSplitTheLine() {
        #expect(AccessLog.field("flickr.photos.search") == "flickr.photos.search")
        #expect(AccessLog.field("a b\nc=d,é") == "a%20b%0Ac%3Dd%2C%C3%A9")
        #expect(AccessLog.field("") == "-")
        #expect(AccessLog.field(String(repeating: "x", count: 100)).count == 64)
    }
}
