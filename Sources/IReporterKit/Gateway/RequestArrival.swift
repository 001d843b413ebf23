/// When a request was handed over, for `CommandContext.arrived` (where
/// `upload_deadline` counts from): nginx's `$msec` when it sent the request
/// (`REQUEST_START`, deploy/nginx), so that a wait in the socket's backlog
/// for a free worker counts, as the web server's and the phone's timeouts
/// count it; else now, the body just read (Apache streams the body: the
/// time the phone takes to send it is not the server's to count).
enum RequestArrival {
    /// The most of a wait credited: a web server on another host whose
    /// clock is behind ours would otherwise have every upload look late.
    static let maxCreditedMillis: Int64 = 30_000

    static func instant(of request: any GatewayRequest, clock: any TimeSource, wallClock: any WallClock) -> Instant {
        let now = clock.now
        guard let sent = request.param("REQUEST_START").flatMap(unixMillis) else { return now }
        // A web server's clock ahead of ours, or a jump of the clock: now.
        let waited = wallClock.unixMillis - sent
        guard (0...3_600_000).contains(waited) else { return now }
        return now.advanced(byMillis: -min(waited, Self.maxCreditedMillis))
    }

    /// nginx's `$msec`: Unix seconds with three decimals.
    static func unixMillis(_ text: String) -> Int64? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...12).contains(parts[0].utf8.count), parts[1].utf8.count == 3,
              let seconds = CommandParameter.wholeNumber(Array(parts[0].utf8), in: 0...999_999_999_999),
              let millis = CommandParameter.wholeNumber(Array(parts[1].utf8), in: 0...999) else { return nil }
        return seconds * 1000 + millis
    }
}
