import CCurl

/// A transfer libcurl could not complete: its `CURLcode`, its message for
/// the code and the details it wrote to the error buffer.
public struct CurlError: Error, CustomStringConvertible, Sendable {
    public let code: UInt32
    public let message: String

    init(code: CURLcode, details: String = "") {
        self.code = code.rawValue
        let summary = String(cString: curl_easy_strerror(code))
        message = details.isEmpty || details == summary ? summary : "\(summary): \(details)"
    }

    public var description: String { "libcurl error \(code): \(message)" }

    /// The other end could not be reached or did not answer in time: trying
    /// again later may work.
    public var isUnreachable: Bool {
        [CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_OPERATION_TIMEDOUT, CURLE_GOT_NOTHING,
         CURLE_SEND_ERROR, CURLE_RECV_ERROR].map(\.rawValue).contains(code)
    }
}
