/// Publishes to an Nchan publisher location (`live_publish_url`, e.g.
/// `http://127.0.0.1/ireporter-publish`): an HTTP POST per message through
/// libcurl (`CurlTransfer`), on a connection kept open between uploads (a
/// connection per message cost each upload a connect, nginx an accept and
/// both a close: bench/profile-changes.md, issue 14), with a short timeout,
/// so a stopped nginx costs an upload at most a fraction of a second (and a
/// warning), never the upload. One worker, one connection: not for several
/// threads.
public final class NchanPublisher: LiveFeed {
    private let url: String
    private let key: String
    private let timeoutMillis: Int
    private let headers: [String]
    private let transfer = CurlTransfer(direct: true)

    /// nil when `url` is not `http://HOST[:PORT]/PATH`, or `key` is not a
    /// header value (letters, digits, `-`, `_`, `.`).
    public init?(url: String, key: String, timeoutMillis: Int32 = 500) {
        guard key.utf8.allSatisfy({ $0 < 0x80 && ($0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
                                                  || Character(Unicode.Scalar($0)).isLetter || Character(Unicode.Scalar($0)).isNumber) }),
              url.hasPrefix("http://"), url.dropFirst("http://".count).contains("/"),
              let parts = CurlTransfer.parts(of: url), parts.scheme == "http"
        else { return nil }
        self.url = url
        self.key = key
        self.timeoutMillis = Int(timeoutMillis)
        // `X-IReporter-Publish-Key`: nginx lets only the holder of the key
        // publish. No `Expect: 100-continue`: nginx would take the message
        // at once anyway, and the wait would cost a round trip.
        headers = ["Content-Type: application/json", "X-IReporter-Publish-Key: \(key)", "Expect:"]
    }

    public func publish(_ message: [UInt8]) { post(message, to: url) }

    /// `live_publish_url`/CHANNEL: nginx's publisher location for the
    /// notification channels (deploy/nginx/ireporter-live.conf).
    public func publish(_ message: [UInt8], toNotificationsOf userID: Int64) {
        post(message, to: url + "/" + notificationChannel(of: userID))
    }

    /// `notifications-` and 128 bits of HMAC-SHA-256 of the user's id under
    /// the publish key: no one without the key can name another's channel,
    /// and every worker and host with the key names the same one.
    public func notificationChannel(of userID: Int64) -> String {
        "notifications-" + Digest.sha256.hmacHex(key: Array(key.utf8), Array("notifications:\(userID)".utf8)).prefix(32)
    }

    private func post(_ message: [UInt8], to url: String) {
        do throws(CurlError) {
            let status = try transfer.perform(method: "POST", url: url, headers: headers, body: message,
                                              timeoutMillis: timeoutMillis).status
            if !(200..<300).contains(status) {
                Metrics.count(.livePublishFailures)
                Log.warning("live feed: \(url) answered HTTP \(status)")
            }
        } catch {
            Metrics.count(.livePublishFailures)
            Log.warning("live feed: \(url): \(error)")
        }
    }
}
