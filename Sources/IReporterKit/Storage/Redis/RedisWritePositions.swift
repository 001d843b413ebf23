import Synchronization

/// Each user's last write position in Redis (`ireporter:gtid:<IdUser>`), for
/// several app hosts. It expires after a day: a replica that far behind is
/// waited on in vain anyway (the read then goes to the primary).
public final class RedisWritePositions: WritePositions {
    static let keyPrefix = "ireporter:gtid:"
    static let lifetimeSeconds = 86_400

    private let connection: Mutex<RedisConnection>

    public init(settings: RedisSettings) { connection = Mutex(RedisConnection(settings: settings)) }

    public func position(of userID: Int64) throws(RedisError) -> String? {
        try connection.withLock { redis throws(RedisError) in
            try redis.command("GET", Self.keyPrefix + String(userID)).bytes().map { String(decoding: $0, as: UTF8.self) }
        }
    }

    public func remember(_ position: String, of userID: Int64) throws(RedisError) {
        try connection.withLock { redis throws(RedisError) in
            _ = try redis.command("SET", Self.keyPrefix + String(userID), position, "EX", String(Self.lifetimeSeconds))
        }
    }
}
