#if canImport(Glibc)
import Glibc
#endif
import CHiredis

/// A failure talking to Redis: hiredis's own error (its `REDIS_ERR_*` code
/// and message), or an error reply from the server (`ERR …`, `WRONGTYPE …`).
public struct RedisError: Error, CustomStringConvertible, Sendable {
    public enum Code: Sendable, Equatable {
        /// hiredis's `REDIS_ERR_IO`, `_EOF`, `_PROTOCOL`, `_OOM` or `_OTHER`.
        case library(Int32)
        /// The server answered the command with an error.
        case reply
        /// The server answered something the caller cannot use.
        case unexpectedReply
    }

    public let code: Code
    public let message: String
    /// Where: the server's address (never its password).
    public var place = ""

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
        Metrics.count(isConnectionLost ? .redisConnectionErrors : code == .reply ? .redisReplyErrors : .redisOtherErrors)
    }

    init(context: UnsafeMutablePointer<redisContext>) {
        let message = withUnsafeBytes(of: context.pointee.errstr) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        self.init(code: .library(context.pointee.err), message: message)
    }

    public var description: String {
        let origin = switch code {
        case .library(let number): "hiredis error \(number)"
        case .reply: "error reply"
        case .unexpectedReply: "unexpected reply"
        }
        return "Redis \(place): \(origin): \(message)"
    }

    /// No reply within `redis_timeout_ms` (hiredis's I/O error of a socket
    /// timeout): the command was sent, and may have run.
    public var isReplyTimeout: Bool {
        code == .library(REDIS_ERR_IO) && [EAGAIN, ETIMEDOUT].contains { message == String(cString: strerror($0)) }
    }

    /// The connection is unusable (server gone or restarting, a timeout,
    /// never established): a new connection may help.
    public var isConnectionLost: Bool {
        switch code {
        case .library(let number): number == REDIS_ERR_IO || number == REDIS_ERR_EOF || number == REDIS_ERR_OTHER
        case .reply: message.hasPrefix("LOADING") || message.hasPrefix("MASTERDOWN")
        case .unexpectedReply: false
        }
    }
}
