#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
@testable import IReporterKit
import TestSupport

extension DatabaseTests {
    /// Migration 007 (a unique index on login.username), the duplicate
    /// names an old database may hold, registration relying on the index,
    /// and `convert-innodb`, on the real MariaDB.
    @Suite struct UniqueUsernameIntegrationTests {
        /// Another connection of ours is running an INSERT into `login` (the
        /// user's own threads need no PROCESS privilege).
        static let insertRunningElsewhere = """
            SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST \
            WHERE ID <> CONNECTION_ID() AND INFO LIKE 'INSERT INTO login%'
            """

        private func database(schema: String = "original-myisam.sql") throws -> DatabaseConnection {
            let database = DatabaseConnection(settings: try TestServices.settings(), reportsProgress: true)
            try TestServices.resetTables(database, schema: schema, migrated: false)
            return database
        }

        @Test func theMigrationIsRefusedWhileANameIsHeldTwiceAndAppliedOnceRenamed() throws {
            let database = try database()
            // Two registrations at once on the PHP version, and a third in another case.
            try database.execute("INSERT INTO login (username, pass) VALUES ('carol', 'a'), ('bob', 'b'), ('Carol ', 'c'), "
                                 + "('bob', 'd'), ('zoë', 'e'), ('CAROL', 'f')")
            let duplicates = DuplicateUsernames(database: database)
            #expect(try duplicates.list() == [
                DuplicateUsernames.Group(username: Array("carol".utf8), accounts: [1, 3, 6]),
                DuplicateUsernames.Group(username: Array("bob".utf8), accounts: [2, 4]),
            ])
            let progress = TaskProgress("migrate", intervalMillis: 60_000)
            guard case .refused(let reason) = try SchemaMigration.uniqueUsername.apply(on: database, progress: progress) else {
                Issue.record("applied over duplicates")
                return
            }
            #expect(reason.contains(#""carol" (IdUser 1, 3, 6), "bob" (IdUser 2, 4)"#) && reason.contains("--rename"), "\(reason)")
            #expect(try !SchemaMigration.uniqueUsername.isApplied(on: database), "nothing changed")

            // A name already taken by the renaming's choice is left to the operator.
            try database.execute("INSERT INTO login (username, pass) VALUES ('bob~4', 'g')")
            let outcome = try duplicates.renameYounger()
            #expect(outcome.renamed.map(\.account) == [3, 6])
            #expect(outcome.renamed.map { String(decoding: $0.to, as: UTF8.self) } == ["carol~3", "carol~6"])
            #expect(outcome.refused == [DuplicateUsernames.Renaming(account: 4, from: Array("bob".utf8), to: Array("bob~4".utf8))])
            try database.execute("UPDATE login SET username = 'bob-the-second' WHERE IdUser = 4")
            #expect(try duplicates.list().isEmpty)

            #expect(try SchemaMigration.uniqueUsername.apply(on: database, progress: progress) == .applied)
            #expect(try SchemaMigration.uniqueUsername.apply(on: database, progress: progress) == .alreadyApplied)
            let names = try database.query("SELECT IdUser, username FROM login ORDER BY IdUser")
                .map { "\($0.int64("IdUser")!):\(String(decoding: $0["username"]!, as: UTF8.self))" }
            #expect(names == ["1:carol", "2:bob", "3:carol~3", "4:bob-the-second", "5:zoë", "6:carol~6", "7:bob~4"],
                    "each oldest account keeps its name, nothing merged or lost")
        }

        @Test func aLongNameIsCutBetweenCharactersToTakeItsSuffix() throws {
            let database = try database()
            let long = String(repeating: "é", count: 22) + "x"  // 45 bytes of UTF-8
            try database.execute("INSERT INTO login (username, pass) VALUES (?, 'a'), (?, 'b')", [.bytes(Array(long.utf8)), .bytes(Array(long.utf8))])
            let renamed = try DuplicateUsernames(database: database).renameYounger().renamed
            #expect(renamed.map { String(decoding: $0.to, as: UTF8.self) } == [String(repeating: "é", count: 21) + "~2"])
        }

        @Test func withTheIndexRegistrationTakesNoLockAndADuplicateIsNameTaken() throws {
            let database = try database(schema: "schema.sql")
            try TestServices.runSQLFile(database, "migrations/007-unique-username.sql")
            // Another server holding the old named lock no longer delays anyone.
            let other = DatabaseConnection(settings: try TestServices.settings())
            #expect(try other.query("SELECT GET_LOCK('iReporter.register', 0) AS granted").first?["granted"] == Array("1".utf8))
            defer { _ = try? other.query("SELECT RELEASE_LOCK('iReporter.register')") }
            let users = MariaDBUserStore(database: database)
            let started = monotonicMillis()
            guard case .created = try users.register(username: Array("dave".utf8), password: Array("p".utf8)) else {
                Issue.record("not created")
                return
            }
            #expect(monotonicMillis() - started < 5000, "did not wait for the named lock")
            #expect(try users.register(username: Array("DAVE ".utf8), password: Array("p".utf8)) == .nameTaken)

            // The name inserted, not yet committed, by another server: the
            // look-up misses it, the INSERT waits for its commit and the
            // index refuses it.
            let settings = try TestServices.settings()
            let inserted = ProcessSignal()
            let outcome = Mutex<RegistrationOutcome?>(nil)
            let insertWaited = Atomic(false)
            DispatchQueue.concurrentPerform(iterations: 2) { role in
                if role == 0 {
                    let server = DatabaseConnection(settings: settings)
                    _ = try? server.command("START TRANSACTION")
                    _ = try? server.execute("INSERT INTO login (username, pass) VALUES ('erin', 'x')")
                    inserted.send()
                    // Committed once the other's INSERT runs, waiting for this row's lock (at most 10 s).
                    let clock = MonotonicClock(), deadline = clock.now.advanced(bySeconds: 10)
                    while !insertWaited.load(ordering: .relaxed) && clock.now < deadline {
                        let running = (try? server.query(Self.insertRunningElsewhere))?.first?.int64("n") ?? 0
                        if running > 0 { insertWaited.store(true, ordering: .relaxed) } else { usleep(10_000) }
                    }
                    _ = try? server.command("COMMIT")
                } else {
                    inserted.wait()
                    let users = MariaDBUserStore(database: DatabaseConnection(settings: settings))
                    let result = try? users.register(username: Array("Erin".utf8), password: Array("p".utf8))
                    outcome.withLock { $0 = result }
                }
            }
            let sawInsert = insertWaited.load(ordering: .relaxed)
            #expect(sawInsert, "the INSERT ran while the name was uncommitted")
            #expect(outcome.withLock { $0 } == .nameTaken)
            #expect(try database.query("SELECT COUNT(*) AS n FROM login WHERE username = 'erin'").first?.int64("n") == 1)
        }

        @Test func theOriginalMyISAMTablesAreConvertedToInnoDBWithTheirRows() throws {
            let database = try database()
            try database.execute("INSERT INTO login (username, pass) VALUES ('alice', 'p'), ('bob', 'q')")
            try database.execute("INSERT INTO photos (title, IdUser) VALUES ('one', 1), ('two', 2)")
            let conversion = InnoDBConversion(database: database)
            #expect(try conversion.tablesToConvert().map(\.name) == ["login", "photos"])
            let progress = TaskProgress("convert-innodb", intervalMillis: 60_000)
            for table in try conversion.tablesToConvert() { #expect(try conversion.convert(table, progress: progress)) }
            #expect(try conversion.tablesToConvert().isEmpty)
            let engines = try database.query("""
                SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('login', 'photos')
                """).map { String(decoding: $0["ENGINE"] ?? [], as: UTF8.self) }
            #expect(engines == ["InnoDB", "InnoDB"])
            #expect(try database.query("SELECT title FROM photos ORDER BY IdPhoto").map { $0["title"]! } == [Array("one".utf8), Array("two".utf8)])
            try database.execute("INSERT INTO photos (title, IdUser) VALUES ('three', 1)")
            #expect(try database.query("SELECT MAX(IdPhoto) AS m FROM photos").first?.int64("m") == 4, "AUTO_INCREMENT kept (the first photo is 2)")
        }
    }
}
