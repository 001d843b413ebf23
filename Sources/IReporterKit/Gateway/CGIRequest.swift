#if canImport(Glibc)
import Glibc
#endif

/// A plain CGI request (Apache mod_cgi): parameters in the environment, the
/// body on stdin, the answer on stdout; one request per process.
final class CGIRequest: GatewayRequest {
    private var remaining: Int?

    /// Whether this process was started as a CGI program.
    static var isCGI: Bool { getenv("GATEWAY_INTERFACE").map { String(cString: $0).hasPrefix("CGI/") } ?? false }

    init() {
        remaining = param("CONTENT_LENGTH").flatMap(Int.init)
    }

    func param(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var filled = 0
        while filled < buffer.count {
            let wanted = min(buffer.count - filled, remaining ?? Int.max)
            if wanted == 0 { break }
            guard let count = try? retryingInterrupted("read", { Glibc.read(0, buffer.baseAddress! + filled, wanted) }),
                  count > 0 else { break }
            filled += count
            remaining = remaining.map { $0 - count }
        }
        return filled
    }

    /// Reads what is left of the body (up to `CONTENT_LENGTH`) and drops it.
    func discardRemainingBody() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
        defer { buffer.deallocate() }
        while (remaining ?? 0) > 0 && read(into: buffer) > 0 {}
    }

    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { writeAll(1, $0) } == nil
    }
}
