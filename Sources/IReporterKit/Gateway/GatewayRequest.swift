#if canImport(Glibc)
import Glibc
#endif

/// One request as the web server hands it over: CGI-style parameters, the
/// body to read, the answer to write. FastCGI and plain CGI both provide it.
protocol GatewayRequest: AnyObject {
    func param(_ name: String) -> String?
    /// Reads up to `buffer.count` body bytes; fewer means the end of the body.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool
}

extension FastCGIRequest: GatewayRequest {}
