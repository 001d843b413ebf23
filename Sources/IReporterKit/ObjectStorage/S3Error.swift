/// A request the object store did not carry out: libcurl could not complete
/// the transfer, or the store answered an error (its HTTP status and S3's
/// error code, such as `SignatureDoesNotMatch` or `NoSuchBucket`).
public struct S3Error: Error, CustomStringConvertible, Sendable {
    public enum Code: Sendable, Equatable {
        case transfer(UInt32)
        case status(Int, code: String)
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
        let text = String(decoding: body, as: UTF8.self)
        code = .status(status, code: S3XML.elements("Code", in: text).first ?? "")
        message = S3XML.elements("Message", in: text).first ?? "HTTP \(status)"
        self.request = request
        unreachable = status >= 500
    }

    /// The store could not be reached, or failed on its side (5xx): the
    /// same request may work later.
    public let unreachable: Bool

    public var description: String {
        switch code {
        case .transfer: "S3 \(request): \(message)"
        case .status(let status, let name): "S3 \(request): HTTP \(status) \(name.isEmpty ? "" : name + ": ")\(message)"
        }
    }
}
