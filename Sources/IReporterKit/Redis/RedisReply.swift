/// One reply from Redis, copied out of hiredis's reply object (which is
/// freed at once). Error replies are thrown as `RedisError` instead.
public indirect enum RedisReply: Equatable, Sendable {
    case string([UInt8])
    case integer(Int64)
    case array([RedisReply])
    case null
    /// A status line such as `OK` or `QUEUED`.
    case status(String)

    /// The string's bytes; nil for a nil reply.
    public func bytes() throws(RedisError) -> [UInt8]? {
        switch self {
        case .string(let bytes): bytes
        case .null: nil
        default: throw RedisError(code: .unexpectedReply, message: "expected a string, got \(self)")
        }
    }

    public func integer() throws(RedisError) -> Int64 {
        guard case .integer(let value) = self else {
            throw RedisError(code: .unexpectedReply, message: "expected an integer, got \(self)")
        }
        return value
    }
}
