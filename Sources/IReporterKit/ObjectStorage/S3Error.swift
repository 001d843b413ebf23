/// A request the object store did not carry out: libcurl could not complete
/// the transfer, or the store answered an error (its HTTP status and S3's
/// error code, such as `SignatureDoesNotMatch` or `NoSuchBucket`).
public struct S3Error: Error, CustomStringConvertible, Sendable {
    public enum Code: Sendable, Equatable {
        case transfer(UInt32)
        case status(Int, code: String)
        case unreadableAnswer(xmlCode: Int32)
        /// Answers that read well but cannot be so (a listing going back to where it was).
        case inconsistentAnswer
    }

    public let code: Code
    public let message: String
    /// Which request: method, bucket and key.
    public let request: String

    init(_ error: CurlError, request: String) {
        (code, message, self.request) = (.transfer(error.code), error.message, request)
        unreachable = error.isUnreachable
    }

    init(status: Int, body: [UInt8], request: String) {
        let error = S3XML.error(body)
        code = .status(status, code: error?.code ?? "")
        message = error.map(\.message).flatMap { $0.isEmpty ? nil : $0 } ?? "HTTP \(status)"
        self.request = request
        unreachable = status >= 500
    }

    /// A 2xx answer whose XML the client could not read.
    init(_ error: XMLError, request: String) {
        (code, message, self.request) = (.unreadableAnswer(xmlCode: error.code), error.message, request)
        unreachable = false
    }

    init(inconsistent message: String, request: String) {
        (code, self.message, self.request) = (.inconsistentAnswer, message, request)
        unreachable = false
    }

    /// The store could not be reached, or failed on its side (5xx): the
    /// same request may work later.
    public let unreachable: Bool

    public var description: String {
        switch code {
        case .transfer, .inconsistentAnswer: "S3 \(request): \(message)"
        case .unreadableAnswer(let xmlCode): "S3 \(request): an answer the client cannot read (XML error \(xmlCode)): \(message)"
        case .status(let status, let name): "S3 \(request): HTTP \(status) \(name.isEmpty ? "" : name + ": ")\(message)"
        }
    }
}
