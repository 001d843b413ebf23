import Testing
@testable import IReporterKit

/// Where `upload_deadline` counts from: nginx's `$msec` when it sent the
/// request, a wait for a free worker included; else the moment it is read.
struct RequestArrivalTests {
    let clock = ManualClock()
    let wallClock = ManualClock(Instant(millis: 1_700_000_010_250))

    func arrival(_ requestStart: String?) -> Instant {
        var parameters: [String: String] = [:]
        parameters["REQUEST_START"] = requestStart
        return RequestArrival.instant(of: ParameterRequest(parameters), clock: clock, wallClock: wallClock)
    }

    @Test func nginxsSendingTimeIsWhenItArrived() {
        #expect(arrival("1700000000.250") == clock.now.advanced(byMillis: -10_000), "ten seconds in the socket's backlog")
        #expect(arrival("1700000010.250") == clock.now)
        #expect(arrival("1699999900.250") == clock.now.advanced(byMillis: -30_000),
                "at most 30 s: a web server's clock behind ours would make every upload late")
    }

    @Test(arguments: [nil, "", "1700000000", "1700000000.25", "1700000000.2500", "x.250", "-1.250", "1700000011.000",
                      "1699996400.000", "99999999999999999999.000"])
    func anythingElseIsNow(_ requestStart: String?) {
        #expect(arrival(requestStart) == clock.now, "\(requestStart ?? "none")")
    }
}
