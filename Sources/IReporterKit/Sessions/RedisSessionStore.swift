#if canImport(Glibc)
import Glibc
#endif

/// Sessions in Redis, kept as phpredis's session handler keeps them, so
/// that PHP hosts with `session.save_handler = redis` (and the default
/// `PHPREDIS_SESSION:` prefix) and this server share logged-in users:
/// the key `PHPREDIS_SESSION:<id>`, the value in PHP's `php` session
/// encoding, and the key's expiry is the idle timeout (PHP's
/// `session.gc_maxlifetime`), renewed at each use as phpredis renews it.
///
/// The absolute timeout is the session's `ireporter_created` variable, as
/// in `SessionFiles`. Each user's sessions are a sorted set
/// `ireporter:sessions:<IdUser>` (in login order), which a login trims to
/// `maxPerUser` in one script (atomic, so concurrent logins see each other).
///
/// With `locking` (phpredis's `redis.session.locking_enabled`), a PHP
/// request holds `<key>_LOCK` while it runs and writes the session at its
/// end: a load waits for that lock (up to `lockWaitMillis`, as phpredis's
/// retries do) so it reads what PHP wrote, and a destroy takes the lock
/// itself (value `<host>|<pid>`, phpredis's form) so that a PHP request in
/// flight cannot write the session back after a logout. Creating needs no
/// lock: the id is fresh and nobody else knows it.
public final class RedisSessionStore: SessionStore {
    public static let keyPrefix = "PHPREDIS_SESSION:"
    static let userIndexPrefix = "ireporter:sessions:"

    private let redis: RedisConnection
    public let idleTimeout: Int
    public let absoluteTimeout: Int
    /// Live sessions kept per user (the oldest go first); 0 = no limit.
    public let maxPerUser: Int
    public let locking: Bool
    /// How long a load or a destroy waits for a PHP request's lock.
    public let lockWaitMillis: Int
    /// The logins' times (`ireporter_created`, as `SessionFiles` keeps it).
    public let clock: any WallClock

    public init(redis: RedisConnection, idleTimeout: Int, absoluteTimeout: Int = 30 * 24 * 3600, maxPerUser: Int = 0,
                locking: Bool = false, lockWaitMillis: Int = 2000, clock: any WallClock = RealtimeClock()) {
        self.redis = redis
        self.idleTimeout = idleTimeout
        self.absoluteTimeout = absoluteTimeout
        self.maxPerUser = maxPerUser
        self.locking = locking
        self.lockWaitMillis = lockWaitMillis
        self.clock = clock
    }

    static func key(_ id: String) -> String { keyPrefix + id }
    static func lockKey(_ id: String) -> String { key(id) + "_LOCK" }

    /// The session with this id, if it exists and has not expired; its
    /// expiry is renewed (GETEX, one round trip).
    public func load(id rawID: [UInt8]) throws(RedisError) -> Session? {
        guard SessionID.isWellFormed(rawID) else { return nil }
        let id = String(decoding: rawID, as: UTF8.self)
        if locking { try waitForLock(of: id) }
        guard let data = try redis.command("GETEX", Self.key(id), "EX", String(idleTimeout)).bytes() else { return nil }
        guard let entries = try? PHPSessionCodec.decode(data) else { return Session(id: id, entries: []) }
        let session = Session(id: id, entries: entries)
        if let created = session[Session.createdKey]?.intValue, created < clock.unixSeconds - Int64(absoluteTimeout) {
            return nil
        }
        return session
    }

    /// Stores the variables under a fresh id (SET NX: never over another
    /// session), then ends the user's oldest sessions beyond `maxPerUser`.
    public func create(_ variables: [(String, PHPValue)], user: Int64) throws(RedisError) -> Session {
        let entries = variables + [(Session.createdKey, .int(clock.unixSeconds))]
        let data = PHPSessionCodec.encode(entries)
        var id = SessionID.new()
        while try redis.command([Array("SET".utf8), Array(Self.key(id).utf8), data,
                                 Array("NX".utf8), Array("EX".utf8), Array(String(idleTimeout).utf8)]) == .null {
            id = SessionID.new()
        }
        try redis.command("EVAL", Self.keepNewestScript, "1", Self.userIndexPrefix + String(user),
                          id, String(maxPerUser), String(absoluteTimeout), Self.keyPrefix)
        return Session(id: id, entries: entries)
    }

    public func endSessions(of user: Int64, except kept: String?) throws(RedisError) {
        try redis.command("EVAL", Self.endSessionsScript, "1", Self.userIndexPrefix + String(user), kept ?? "", Self.keyPrefix)
    }

    /// Deletes every session the user's set (KEYS[1]) lists but ARGV[1],
    /// and leaves that one alone in the set.
    private static let endSessionsScript = """
        for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
          if id ~= ARGV[1] then
            redis.call('DEL', ARGV[2] .. id)
            redis.call('ZREM', KEYS[1], id)
          end
        end
        return 0
        """

    /// Adds ARGV[1] to the user's set (KEYS[1]) after every id in it (at
    /// Redis's time in µs, or later), forgets the ids whose session is gone
    /// and deletes the oldest beyond ARGV[2] (0: none).
    private static let keepNewestScript = """
        local now = redis.call('TIME')
        local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
        local order = math.max(tonumber(now[1]) * 1000000 + tonumber(now[2]), tonumber(newest[2] or 0) + 1)
        redis.call('ZADD', KEYS[1], order, ARGV[1])
        redis.call('EXPIRE', KEYS[1], ARGV[3])
        local live = {}
        for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
          if redis.call('EXISTS', ARGV[4] .. id) == 1 then table.insert(live, id) else redis.call('ZREM', KEYS[1], id) end
        end
        local excess = tonumber(ARGV[2]) > 0 and #live - tonumber(ARGV[2]) or 0
        for i = 1, excess do
          redis.call('DEL', ARGV[4] .. live[i])
          redis.call('ZREM', KEYS[1], live[i])
        end
        return math.max(excess, 0)
        """

    /// Deletes the session (logout, or the old id after a login); with
    /// locking, under its lock. A Redis that cannot be reached is logged:
    /// the session then ends at its expiry.
    public func destroy(id: String) {
        do {
            let lock = locking ? try acquireLock(of: id) : nil
            try redis.command("DEL", Self.key(id))
            if let lock { try redis.command("EVAL", Self.releaseLockScript, "1", Self.lockKey(id), lock) }
        } catch {
            Log.error("destroying a session: \(error)")
        }
    }

    /// Deletes the lock only if it is still ours (it may have expired and
    /// been taken by a PHP request since).
    private static let releaseLockScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """

    /// Redis expires the keys itself.
    @discardableResult
    public func sweep() -> Int { 0 }

    private func waitForLock(of id: String) throws(RedisError) {
        var waited = 0
        while try redis.command("EXISTS", Self.lockKey(id)) != .integer(0), waited < lockWaitMillis {
            usleep(20_000)
            waited += 20
        }
    }

    /// Takes the session's lock as phpredis does (SET NX PX, `<host>|<pid>`);
    /// nil when a PHP request kept it past `lockWaitMillis` (the session is
    /// then destroyed anyway: a logout is never refused).
    private func acquireLock(of id: String) throws(RedisError) -> String? {
        let secret = "\(Self.hostName)|\(getpid())"
        var waited = 0
        while waited <= lockWaitMillis {
            let reply = try redis.command("SET", Self.lockKey(id), secret, "NX", "PX", String(Self.lockExpireMillis))
            if reply != .null { return secret }
            usleep(20_000)
            waited += 20
        }
        Log.warning("session \(id.prefix(6))…: its lock is still held after \(lockWaitMillis) ms; destroyed without it")
        return nil
    }

    /// phpredis's default lock lifetime (`max_execution_time`).
    static let lockExpireMillis = 30_000

    private static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(cBuffer: buffer)
    }()
}
