#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

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

    /// logrotate moved the file, and the new one cannot be made: the lines
    /// go on into the file open before (they used to go nowhere).
    @Test func aReopenThatFailsKeepsTheFileOpenBefore() throws {
        let scratch = ScratchDirectory("access-log")
        var configuration = Configuration()
        configuration.accessLog = "\(scratch.path)/access.log"
        let log = AccessLog(configuration: configuration)
        log.write(APIResponder.Record(command: "first"))
        try #require(rename(configuration.accessLog, "\(scratch.path)/access.log.1") == 0)
        try #require(mkdir(configuration.accessLog, 0o755) == 0) // a folder there: the file cannot be made
        log.reopen()
        log.write(APIResponder.Record(command: "second"))
        let kept = String(decoding: readFile("\(scratch.path)/access.log.1") ?? [], as: UTF8.self)
        #expect(kept.contains("command=first") && kept.contains("command=second"), "\(kept)")
    }
}
