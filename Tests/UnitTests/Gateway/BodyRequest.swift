@testable import IReporterKit

/// A gateway request with its FastCGI parameters and a body, whose answer
/// is kept: the gateway driven as the web server drives it.
final class BodyRequest: GatewayRequest {
    let params: [String: String]
    private var body: [UInt8]
    private(set) var written: [UInt8] = []

    init(_ params: [String: String], body: [UInt8] = []) {
        var params = params
        if !body.isEmpty, params["CONTENT_LENGTH"] == nil { params["CONTENT_LENGTH"] = String(body.count) }
        (self.params, self.body) = (params, body)
    }

    /// A form POST to /iReporter/ with these fields (urlencoded) and a session cookie.
    convenience init(form fields: [(String, String)], cookie: [UInt8]? = nil, extra: [String: String] = [:]) {
        let body = fields.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        var params = ["REQUEST_METHOD": "POST", "REQUEST_URI": "/iReporter/", "REMOTE_ADDR": "192.0.2.1",
                      "CONTENT_TYPE": "application/x-www-form-urlencoded"]
        if let cookie { params["HTTP_COOKIE"] = "PHPSESSID=" + String(decoding: cookie, as: UTF8.self) }
        self.init(params.merging(extra) { $1 }, body: Array(body.utf8))
    }

    func param(_ name: String) -> String? { params[name] }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, body.count)
        buffer.copyBytes(from: body.prefix(count))
        body.removeFirst(count)
        return count
    }

    func write(_ bytes: [UInt8]) -> Bool {
        written += bytes
        return true
    }

    var answer: String { String(decoding: written, as: UTF8.self) }

    /// The session id a `Set-Cookie` of the answer gives, if any.
    var setCookie: [UInt8]? {
        guard let start = answer.firstRange(of: "Set-Cookie: PHPSESSID=")?.upperBound else { return nil }
        return Array(answer[start...].prefix { $0 != ";" }.utf8)
    }
}
