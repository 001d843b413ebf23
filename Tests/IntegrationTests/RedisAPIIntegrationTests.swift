#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// The app's flow with its sessions and counters in Redis (two workers,
/// as two app hosts would be), and what a phone gets while Redis is down.
extension DatabaseTests {
@Suite(.enabled(if: RedisTestServer.available, "needs redis-server: scripts/deps.sh installs it"))
struct RedisAPIIntegrationTests {
    static let alicePass = "18c69224371c58c547b68bfa6d28dc8aeff006e4"
    static let unavailable = #"{"error":"The service is temporarily unavailable, please try again"}"#
    let photo = makeJPEG(width: 320, height: 240)

    @Test func theAppsFlowWithSessionsAndCountersInRedis() throws {
        let settings = RedisTestServer.shared.freshDatabase()
        // Both hosts count at one clock that moves only when the test says,
        // so the login block below cannot run out on a slow machine.
        let clock = ManualClock()
        let phone = try APIHarness(sessions: RedisSessionStore(redis: RedisConnection(settings: settings), idleTimeout: 3600),
                                   counters: RedisCounters(settings: settings, clock: clock))
        // Another host: its own connections and stores, the same Redis.
        var cached = APIHarness.fastHashing
        cached.streamCacheMillis = 60_000
        let otherHost = IReporterAPI(services: APIHarness.services(
            database: phone.database, sessions: RedisSessionStore(redis: RedisConnection(settings: settings), idleTimeout: 3600),
            counters: RedisCounters(settings: settings, clock: clock), uploadDirectory: phone.uploads.path, policy: cached))
        #expect(try phone.body([("command", "register"), ("username", "alice"), ("password", Self.alicePass)])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", Self.alicePass)])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        let id = String(decoding: try #require(phone.cookie), as: UTF8.self)
        let redis = RedisConnection(settings: settings)
        #expect(try redis.command("EXISTS", "PHPREDIS_SESSION:\(id)") == .integer(1))
        #expect(try phone.body([("command", "stream")], through: otherHost) == #"{"result":[]}"#, "cached there now")
        #expect(try phone.body([("command", "upload"), ("title", "pier")], file: photo, through: otherHost)
                == #"{"successful":1}"#, "logged in on the other host too")
        #expect(try phone.body([("command", "stream")], through: otherHost).contains(#""title":"pier""#))
        #expect(try phone.body([("command", "upload"), ("title", "dusk")], file: photo) == #"{"successful":1}"#)
        #expect(try phone.body([("command", "stream")], through: otherHost).contains(#""title":"dusk""#),
                "the other host's cached stream saw the generation move in Redis")
        let logout = try phone.send([("command", "logout")], through: otherHost)
        #expect(logout.body.isEmpty)
        #expect(try redis.command("EXISTS", "PHPREDIS_SESSION:\(id)") == .integer(0))
        phone.cookie = Array(id.utf8)
        #expect(try phone.body([("command", "upload"), ("title", "again")], file: photo) == #"{"error":"Authorization required"}"#)
        // Failed logins counted on one host block on the other.
        for _ in 0..<5 { _ = try phone.send([("command", "login"), ("username", "alice"), ("password", "wrong")]) }
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", Self.alicePass)], through: otherHost)
                .hasPrefix(#"{"error":"Too many failed logins, try again in 1 seconds"#))
        clock.advance(bySeconds: 1)
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", Self.alicePass)], through: otherHost)
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#, "the block lasted its second")
    }

    @Test func whileRedisIsDownPhonesGetAClearErrorAndAfterwardsServiceAgain() throws {
        let server = RedisTestServer(port: RedisTestServer.shared.port + 2)
        let settings = server.settings(database: 0)
        let phone = try APIHarness(sessions: RedisSessionStore(redis: RedisConnection(settings: settings), idleTimeout: 3600),
                                   counters: RedisCounters(settings: settings))
        _ = try phone.send([("command", "register"), ("username", "bob"), ("password", Self.alicePass)])
        #expect(try phone.body([("command", "upload"), ("title", "before")], file: photo) == #"{"successful":1}"#)
        server.stop()
        #expect(try phone.body([("command", "upload"), ("title", "down")], file: photo) == Self.unavailable)
        #expect(try phone.body([("command", "login"), ("username", "bob"), ("password", Self.alicePass)]) == Self.unavailable)
        #expect(try phone.body([("command", "stream")]).contains(#""title":"before""#), "the stream is still served")
        #expect(try phone.rowCount("photos") == 1, "nothing half done")
        server.start()
        // This Redis keeps nothing on disk: the session is gone, a new login works.
        #expect(try phone.body([("command", "upload"), ("title", "after")], file: photo) == #"{"error":"Authorization required"}"#)
        #expect(try phone.body([("command", "login"), ("username", "bob"), ("password", Self.alicePass)])
                == #"{"result":[{"IdUser":"1","username":"bob"}]}"#)
        #expect(try phone.body([("command", "upload"), ("title", "after")], file: photo) == #"{"successful":1}"#)
    }
}
}
