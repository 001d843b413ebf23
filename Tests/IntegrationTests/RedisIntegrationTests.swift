#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// The Redis stores against a real redis-server (`RedisTestServer`, one per
/// test process; each test in a database of its own).
@Suite(.enabled(if: RedisTestServer.available, "needs redis-server: scripts/deps.sh installs it"))
struct RedisIntegrationTests {
    static func sessionStore(_ settings: RedisSettings, idleTimeout: Int = 3600, absoluteTimeout: Int = 30 * 86400,
                             maxPerUser: Int = 0, locking: Bool = false, lockWaitMillis: Int = 2000,
                             clock: any WallClock = RealtimeClock()) -> RedisSessionStore {
        RedisSessionStore(redis: RedisConnection(settings: settings), idleTimeout: idleTimeout, absoluteTimeout: absoluteTimeout,
                          maxPerUser: maxPerUser, locking: locking, lockWaitMillis: lockWaitMillis, clock: clock)
    }

    // MARK: - the connection

    @Test func repliesComeBackAsSwiftValuesAndErrorsCarryTheServersMessage() throws {
        let redis = RedisConnection(settings: RedisTestServer.shared.freshDatabase())
        #expect(try redis.command("PING") == .status("PONG"))
        let binary: [UInt8] = [0, 1, 0xFF, UInt8(ascii: "\r"), UInt8(ascii: "\n")]
        try redis.command(Array("SET".utf8), Array("bytes".utf8), binary)
        #expect(try redis.command("GET", "bytes").bytes() == binary, "any byte, NUL included, goes both ways")
        #expect(try redis.command("GET", "absent") == .null)
        #expect(try redis.command("INCR", "n") == .integer(1))
        try redis.command("RPUSH", "list", "a", "b")
        #expect(try redis.command("LRANGE", "list", "0", "-1") == .array([.string(Array("a".utf8)), .string(Array("b".utf8))]))
        #expect {
            try redis.command("INCR", "list")
        } throws: { error in
            let error = error as? RedisError
            return error?.code == .reply && error?.message.hasPrefix("WRONGTYPE") == true && error?.isConnectionLost == false
        }
        #expect(try redis.command("PING") == .status("PONG"), "an error reply leaves the connection usable")
    }

    @Test func aLostConnectionIsMadeAgainOnce() throws {
        let settings = RedisTestServer.shared.freshDatabase()
        let redis = RedisConnection(settings: settings)
        try redis.command("SET", "k", "v")
        let clientID = try redis.command("CLIENT", "ID").integer()
        try RedisConnection(settings: settings).command("CLIENT", "KILL", "ID", String(clientID))
        #expect(try redis.command("GET", "k").bytes() == Array("v".utf8), "reconnected, in the same database")
    }

    @Test func theURLFormsAreRead() throws {
        let tcp = try RedisSettings(url: "redis://:s%40cret@10.0.0.5:6380/3")
        #expect(tcp.address == .tcp(host: "10.0.0.5", port: 6380) && tcp.password == "s@cret" && tcp.user == nil && tcp.database == 3)
        let acl = try RedisSettings(url: "redis://app:pw@[::1]")
        #expect(acl.address == .tcp(host: "::1", port: 6379) && acl.user == "app" && acl.password == "pw" && acl.database == 0)
        let unix = try RedisSettings(url: "unix:///run/redis/redis.sock?db=2&password=x")
        #expect(unix.address == .unix(path: "/run/redis/redis.sock") && unix.database == 2 && unix.password == "x")
        #expect(throws: ConfigurationError.self) { try RedisSettings(url: "http://localhost") }
        #expect(throws: ConfigurationError.self) { try RedisSettings(url: "redis://host:99999") }
        #expect(!tcp.place.contains("cret"), "messages never show the password")
    }

    // MARK: - sessions

    @Test func aSessionIsStoredAsPhpredisStoresIt() throws {
        let settings = RedisTestServer.shared.freshDatabase()
        let store = Self.sessionStore(settings, idleTimeout: 600)
        let session = try store.create([("IdUser", .string(Array("7".utf8)))], user: 7)
        let redis = RedisConnection(settings: settings)
        let stored = try #require(try redis.command("GET", "PHPREDIS_SESSION:\(session.id)").bytes())
        let created = try #require(session[Session.createdKey]?.intValue)
        #expect(String(decoding: stored, as: UTF8.self) == #"IdUser|s:1:"7";ireporter_created|i:\#(created);"#)
        #expect((595...600).contains(try redis.command("TTL", "PHPREDIS_SESSION:\(session.id)").integer()),
                "expires after the idle timeout")
        try redis.command("EXPIRE", "PHPREDIS_SESSION:\(session.id)", "100")
        #expect(try store.load(id: Array(session.id.utf8))?["IdUser"] == .string(Array("7".utf8)))
        #expect(try redis.command("TTL", "PHPREDIS_SESSION:\(session.id)").integer() > 500, "each use renews the expiry")
        store.destroy(id: session.id)
        #expect(try store.load(id: Array(session.id.utf8)) == nil)
        #expect(try redis.command("EXISTS", "PHPREDIS_SESSION:\(session.id)") == .integer(0))
        #expect(try store.load(id: Array("../../etc/passwd".utf8)) == nil, "a malformed id is never looked up")
    }

    @Test func sessionsEndAtTheIdleAndTheAbsoluteTimeout() throws {
        let settings = RedisTestServer.shared.freshDatabase()
        // The idle timeout is the key's expiry, which Redis keeps on its own clock: waited for, bounded.
        // 3 s: still there when PTTL looks, on a busy machine.
        let idle = try Self.sessionStore(settings, idleTimeout: 3).create([("IdUser", .string(Array("1".utf8)))], user: 1)
        let redis = RedisConnection(settings: settings)
        #expect((1...3000).contains(try redis.command("PTTL", "PHPREDIS_SESSION:\(idle.id)").integer()))
        let deadline = monotonicMillis() + 8000
        while try redis.command("EXISTS", "PHPREDIS_SESSION:\(idle.id)") != .integer(0) && monotonicMillis() < deadline {
            usleep(20_000)
        }
        #expect(try Self.sessionStore(settings).load(id: Array(idle.id.utf8)) == nil, "Redis expired it")
        // The absolute timeout is the login's time, on the store's clock: stepped.
        let clock = ManualClock.startingAtTimeOfDay()
        let store = Self.sessionStore(settings, idleTimeout: 60 * 86400, absoluteTimeout: 30 * 86400, clock: clock)
        let session = try store.create([("IdUser", .string(Array("1".utf8)))], user: 1)
        clock.advance(bySeconds: 30 * 86400)
        #expect(try store.load(id: Array(session.id.utf8)) != nil, "30 days after the login, used ever since")
        clock.advance(bySeconds: 1)
        #expect(try store.load(id: Array(session.id.utf8)) == nil)
    }

    @Test func aLoginBeyondTheCapEndsTheUsersOldestSession() throws {
        let settings = RedisTestServer.shared.freshDatabase()
        let store = Self.sessionStore(settings, maxPerUser: 2)
        let sessions = try (0..<3).map { _ in try store.create([("IdUser", .string(Array("5".utf8)))], user: 5) }
        let other = try store.create([("IdUser", .string(Array("6".utf8)))], user: 6)
        #expect(try store.load(id: Array(sessions[0].id.utf8)) == nil, "the oldest ended")
        #expect(try store.load(id: Array(sessions[1].id.utf8)) != nil && store.load(id: Array(sessions[2].id.utf8)) != nil)
        #expect(try store.load(id: Array(other.id.utf8)) != nil, "another user's sessions are not counted")
        // A logout frees its place: the next login ends nothing.
        store.destroy(id: sessions[1].id)
        _ = try store.create([("IdUser", .string(Array("5".utf8)))], user: 5)
        #expect(try store.load(id: Array(sessions[2].id.utf8)) != nil)
    }

    @Test(arguments: [0, 5])
    func aUsersSessionsEndButTheOneKept(maxPerUser: Int) throws {
        let store = Self.sessionStore(RedisTestServer.shared.freshDatabase(), maxPerUser: maxPerUser)
        let fives = try (0..<3).map { _ in try store.create([("IdUser", .string(Array("5".utf8)))], user: 5) }
        let six = try store.create([("IdUser", .string(Array("6".utf8)))], user: 6)
        try store.endSessions(of: 5, except: fives[1].id)
        #expect(try store.load(id: Array(fives[0].id.utf8)) == nil && store.load(id: Array(fives[2].id.utf8)) == nil)
        #expect(try store.load(id: Array(fives[1].id.utf8)) != nil && store.load(id: Array(six.id.utf8)) != nil)
        try store.endSessions(of: 5, except: nil)
        #expect(try store.load(id: Array(fives[1].id.utf8)) == nil && store.load(id: Array(six.id.utf8)) != nil)
    }

    @Test func withLockingALoadWaitsForAPHPRequestsLockAndADestroyTakesIt() throws {
        let settings = RedisTestServer.shared.freshDatabase()
        let store = Self.sessionStore(settings, locking: true, lockWaitMillis: 1000)
        let session = try store.create([("IdUser", .string(Array("3".utf8)))], user: 3)
        let redis = RedisConnection(settings: settings)
        let lockKey = "PHPREDIS_SESSION:\(session.id)_LOCK"
        // A PHP request holding the session for 300 ms (phpredis's SET NX PX),
        // from before the SET: its 300 ms count from when Redis ran it.
        var started = monotonicMillis()
        try redis.command("SET", lockKey, "php-host|1234", "NX", "PX", "300")
        #expect(try store.load(id: Array(session.id.utf8)) != nil)
        #expect(monotonicMillis() - started >= 250, "read after PHP released it")
        store.destroy(id: session.id)
        #expect(try redis.command("EXISTS", lockKey) == .integer(0), "our lock is released")
        // A lock PHP never lets go of: waited for, then the session ends anyway.
        let stuck = try store.create([("IdUser", .string(Array("3".utf8)))], user: 3)
        try redis.command("SET", "PHPREDIS_SESSION:\(stuck.id)_LOCK", "php-host|99")
        started = monotonicMillis()
        store.destroy(id: stuck.id)
        #expect(monotonicMillis() - started >= 1000)
        #expect(try redis.command("EXISTS", "PHPREDIS_SESSION:\(stuck.id)") == .integer(0))
        #expect(try redis.command("GET", "PHPREDIS_SESSION:\(stuck.id)_LOCK").bytes() == Array("php-host|99".utf8),
                "someone else's lock is not ours to delete")
        // Without locking (phpredis's default) the lock keys are not looked at.
        let unlocked = Self.sessionStore(settings, locking: false)
        try redis.command("SET", lockKey, "php-host|1234", "PX", "5000")
        let again = try unlocked.create([("IdUser", .string(Array("3".utf8)))], user: 3)
        try redis.command("SET", "PHPREDIS_SESSION:\(again.id)_LOCK", "php-host|1", "PX", "5000")
        started = monotonicMillis()
        #expect(try unlocked.load(id: Array(again.id.utf8)) != nil)
        // Waiting for the lock would take lockWaitMillis (2 s); 1 s: a busy machine.
        #expect(monotonicMillis() - started < 1000)
    }

    // MARK: - PHP's phpredis reading and writing the same sessions

    /// Runs php-cli with phpredis's session handler on `settings`' database.
    static func php(_ settings: RedisSettings, _ code: String, _ argument: String = "") -> String? {
        guard case .tcp(let host, let port) = settings.address else { return nil }
        let command = "php -d session.save_handler=redis -d 'session.save_path=\"tcp://\(host):\(port)?database=\(settings.database)\"'"
            + " -d session.use_strict_mode=0 -r '\(code)' \(argument) 2>&1"
        guard let pipe = popen(command, "r") else { return nil }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, pipe)
            if count <= 0 { break }
            output += buffer[..<count]
        }
        return pclose(pipe) == 0 ? String(decoding: output, as: UTF8.self) : "php failed: " + String(decoding: output, as: UTF8.self)
    }

    @Test func phpReadsOurSessionsAndWeReadPHPs() throws {
        let settings = RedisTestServer.shared.freshDatabase()
        let store = Self.sessionStore(settings)
        let ours = try store.create([("IdUser", .string(Array("7".utf8)))], user: 7)
        #expect(Self.php(settings, #"session_id($argv[1]); session_start(); echo $_SESSION["IdUser"] ?? "none";"#, ours.id) == "7")
        let phpID = try #require(Self.php(settings, #"session_start(); $_SESSION["IdUser"] = "42"; echo session_id();"#))
        #expect(try store.load(id: Array(phpID.utf8))?["IdUser"]?.intValue == 42, "\(phpID)")
    }

    // MARK: - counters

    @Test(arguments: SharedCountersBehaviour.all.indices)
    func theCountersFollowTheRulesOfTheOtherStores(check: Int) throws {
        try SharedCountersBehaviour.all[check].1(RedisCounters(settings: RedisTestServer.shared.freshDatabase()))
    }

    /// The login throttle on Redis through an injected clock, stepped: the
    /// block lasts its second to the millisecond, the answer rounds up.
    @Test func theLoginThrottleCountsAtTheInjectedClock() throws {
        let clock = ManualClock(Instant(millis: 1_000_000_999))
        let throttle = LoginThrottle(counters: RedisCounters(settings: RedisTestServer.shared.freshDatabase(), clock: clock))
        let alice = Array("alice".utf8)
        for _ in 0..<5 { try throttle.failed(account: alice, address: "192.0.2.1") }
        clock.advance(byMillis: 1)
        #expect(try throttle.wait(account: alice, address: "192.0.2.1") == 1)
        clock.advance(byMillis: 998)
        #expect(try throttle.wait(account: alice, address: "192.0.2.1") == 1, "1 ms left: 1 s, never 0")
        clock.advance(byMillis: 1)
        #expect(try throttle.wait(account: alice, address: "192.0.2.1") == nil)
    }

    /// Without a clock given, the counters count at the Redis server's time:
    /// read from Redis (here on this host: its wall clock), never going back.
    @Test func theDefaultClockIsTheRedisServers() throws {
        let clock = RedisServerClock(settings: RedisTestServer.shared.freshDatabase())
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let readings = (0..<50).map { _ in clock.now.millis }
        #expect(abs(readings[0] - (Int64(wall.tv_sec) * 1000 + Int64(wall.tv_nsec) / 1_000_000)) < 5000, "\(readings[0])")
        #expect(zip(readings, readings.dropFirst()).allSatisfy { $0 <= $1 })
        // Between two readings of Redis's TIME (a minute apart), the local monotonic clock advances it.
        let local = ManualClock()
        let extrapolated = RedisServerClock(settings: RedisTestServer.shared.freshDatabase(), local: local)
        let first = extrapolated.now
        #expect(extrapolated.now == first, "no round trip per reading")
        local.advance(byMillis: 1500)
        #expect(extrapolated.now == first.advanced(byMillis: 1500))
    }

    @Test func processesCountingAtOnceLoseNoCount() throws {
        let settings = RedisTestServer.shared.freshDatabase()
        // Once here first: a forked child of this multi-threaded test process
        // must not be the first to resolve this code's runtime metadata (a
        // lock another thread held at fork time is never freed in the child).
        let warmUp = RedisCounters(settings: RedisTestServer.shared.freshDatabase())
        _ = try warmUp.allow("upload:1", limit: 1000, windowSeconds: 3600, at: Instant(millis: 100_000))
        try warmUp.bumpStreamGeneration()
        let workers = (0..<4).map { _ in
            ChildProcess {
                let counters = RedisCounters(settings: settings)
                for _ in 0..<50 {
                    do {
                        guard try counters.allow("upload:1", limit: 1000, windowSeconds: 3600, at: Instant(millis: 100_000)) else { return 1 }
                        try counters.bumpStreamGeneration()
                    } catch {
                        print("worker: \(error)")
                        return 2
                    }
                }
                return 0
            }
        }
        #expect(workers.map { $0.wait() } == [0, 0, 0, 0])
        let counters = RedisCounters(settings: settings)
        #expect(try counters.reset("upload:1") == 200, "WATCH/MULTI/EXEC: no lost update")
        #expect(try counters.streamGeneration == 200)
    }

    // MARK: - Redis down

    @Test func aRedisDownIsAnErrorAtOnceAndBackAsSoonAsRedisIs() throws {
        let server = RedisTestServer(port: RedisTestServer.shared.port + 1)
        let settings = server.settings(database: 0)
        let store = Self.sessionStore(settings)
        let counters = RedisCounters(settings: settings)
        let session = try store.create([("IdUser", .string(Array("9".utf8)))], user: 9)
        server.stop()
        let started = monotonicMillis()
        #expect {
            try store.load(id: Array(session.id.utf8))
        } throws: { error in
            (error as? RedisError)?.isConnectionLost == true
        }
        #expect(throws: RedisError.self) { try counters.blockedMillis("login:x", at: Instant(millis: 1000)) }
        #expect(monotonicMillis() - started < 1000, "refused at once, no hang")
        server.start()
        #expect(try store.load(id: Array(session.id.utf8)) == nil, "an empty Redis (no persistence here): logged out, not failing")
        #expect(try counters.blockedMillis("login:x", at: Instant(millis: 1000)) == nil)
    }
}
