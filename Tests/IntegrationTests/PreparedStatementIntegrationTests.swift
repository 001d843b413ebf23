#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

extension DatabaseTests {
    /// A connection holds a bounded number of server-side prepared
    /// statements whatever its clients send (MariaDB's
    /// `max_prepared_stmt_count` is server-wide: reached, every PREPARE of
    /// every application on the server fails), and it still answers when
    /// the server's limit is reached.
    @Suite struct PreparedStatementIntegrationTests {
        /// The root client of the test server (`scripts/test.sh`), for SET GLOBAL.
        private static let rootCommand = getenv("IREPORTER_TEST_MYSQL_ROOT").map { String(cString: $0) }

        /// A harness with alice (IdUser 1) and `photos` photos of hers, each
        /// with details and a secret.
        private func harness(photos: Int) throws -> APIHarness {
            let phone = try APIHarness()
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
            let store = MariaDBPhotoStore(database: phone.database)
            for index in 0..<photos {
                _ = try store.add(userID: 1, title: Array("photo \(index)".utf8),
                                  details: PhotoDetails(created: 1_700_000_000 + Int64(index), width: 64, height: 48),
                                  secret: .random(), publish: { _, _ in }, unpublish: { _ in })
            }
            return phone
        }

        /// The server's prepared statements, over every connection.
        private static func serverCount(_ observer: DatabaseConnection) throws -> Int64 {
            let rows = try observer.query("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'")
            return Int64(String(decoding: rows.first?["Value"] ?? [], as: UTF8.self)) ?? -1
        }

        /// Every kind of id list the stores bind, of `count` ids from `ids`
        /// starting at `offset`, and a page of the stream with extras (its
        /// secrets read as a list).
        private func lists(_ phone: APIHarness, count: Int, offset: Int, ids: [Int64]) throws {
            let store = MariaDBPhotoStore(database: phone.database)
            let votes = MariaDBVoteStore(database: phone.database)
            let list = (0..<count).map { ids[($0 + offset) % ids.count] }
            #expect(try store.photos(ids: Set(list)).count == Set(list).count)
            #expect(try store.details(ids: Set(list)).count == Set(list).count)
            #expect(try store.secrets(ids: Set(list)).count == Set(list).count)
            #expect(try store.existing(list + [999_999]) == Set(list))
            _ = try votes.votes(by: 1, on: list)
            #expect(try store.extras(of: list, viewer: 1).count == Set(list).count)
            let body = try phone.body([("command", "stream"), ("count", "\(count % 100 + 1)"), ("before", "\(ids[offset % ids.count] + 1)"),
                                       ("extras", "secret,created,likes")])
            #expect(body.hasPrefix(#"{"result":["#), "\(body.prefix(200))")
        }

        @Test func manyDistinctIDListsKeepTheCountFlat() throws {
            let phone = try harness(photos: 150)
            let ids = try phone.database.query("SELECT IdPhoto FROM photos ORDER BY IdPhoto").compactMap { $0.int64("IdPhoto") }
            let observer = DatabaseConnection(settings: try TestServices.settings())
            // Lists of every length once, then hundreds of lists never sent before.
            for count in 1...140 { try lists(phone, count: count, offset: count * 3, ids: ids) }
            let held = phone.database.preparedStatementCount
            let before = try Self.serverCount(observer)
            for round in 1...300 { try lists(phone, count: round % 140 + 1, offset: round * 7 + 1, ids: ids) }
            #expect(phone.database.preparedStatementCount == held, "a statement per width of each list, none per list")
            #expect(held < DatabaseConnection.defaultStatementCacheCapacity, "the stream's statements fit in the cache")
            // (At most: a connection closed by an earlier test may release its statements meanwhile.)
            #expect(try Self.serverCount(observer) <= before)
        }

        @Test func distinctTextsBeyondTheCapacityCloseTheLeastRecentlyUsed() throws {
            let settings = try TestServices.settings()
            let observer = DatabaseConnection(settings: settings)
            let database = DatabaseConnection(settings: settings, statementCacheCapacity: 4)
            let before = try Self.serverCount(observer)
            for index in 0..<200 {
                #expect(try database.query("SELECT ? + \(index) AS n", [.int(1)]).first?.int64("n") == Int64(index + 1))
                #expect(database.preparedStatementCount <= 4)
                // A statement closed to make room is closed before the next is prepared on
                // the same connection, so the server has counted it out by then.
                #expect(try Self.serverCount(observer) <= before + 4)
            }
            database.disconnect()
            #expect(database.preparedStatementCount == 0)
        }

        /// The server's `max_prepared_stmt_count` set just above what it
        /// holds: a new statement fails with 1461 until this connection
        /// closes its own, then every call is answered.
        @Test(.enabled(if: rootCommand != nil, "needs IREPORTER_TEST_MYSQL_ROOT (scripts/test.sh)"))
        func theServersLimitReachedEveryCallIsStillAnswered() throws {
            let phone = try harness(photos: 60)
            let ids = try phone.database.query("SELECT IdPhoto FROM photos ORDER BY IdPhoto").compactMap { $0.int64("IdPhoto") }
            let settings = try TestServices.settings()
            let observer = DatabaseConnection(settings: settings)
            let database = DatabaseConnection(settings: settings, statementCacheCapacity: 8)
            for index in 0..<3 { _ = try database.query("SELECT ? + \(index) AS n", [.int(1)]) }
            let original = try observer.query("SELECT @@GLOBAL.max_prepared_stmt_count AS n").first?.int64("n") ?? 16382
            try Self.root("SET GLOBAL max_prepared_stmt_count = \(try Self.serverCount(observer) + 1)")
            defer { try? Self.root("SET GLOBAL max_prepared_stmt_count = \(original)") }

            #expect(try database.query("SELECT ? + 3 AS n", [.int(1)]).first?.int64("n") == 4)
            #expect(throws: DatabaseError.self, "the server holds its limit") {
                try DatabaseConnection(settings: settings).query("SELECT 1")
            }
            for index in 4..<60 {
                #expect(try database.query("SELECT ? + \(index) AS n", [.int(1)]).first?.int64("n") == Int64(index + 1))
            }
            for count in 1...60 { try lists(phone, count: count, offset: count, ids: ids) }
        }

        /// Runs SQL as root through the test server's client.
        private static func root(_ sql: String) throws {
            let status = try SpawnedProgram(["/bin/sh", "-c", "\(rootCommand!) -e \"$0\"", sql]).exitStatus()
            guard status == 0 else { throw ConfigurationError("root SQL exited with \(status): \(sql)") }
        }
    }
}
