import Testing
@testable import IReporterKit
import TestSupport

extension DatabaseTests {
    /// The errors each library wrapper raises are counted where it raises
    /// them (the status page's `?openmetrics`), by kind.
    @Suite struct MetricsIntegrationTests {
        /// `body` with a fresh table as the process's; the table afterwards.
        private func counting(_ body: () -> Void) -> MetricsTable {
            let table = MetricsTable()
            Metrics.table = table
            defer { Metrics.table = nil }
            body()
            return table
        }

        @Test func aDatabaseErrorIsCountedByKind() throws {
            let database = DatabaseConnection(settings: try TestServices.settings())
            defer { database.disconnect() }
            _ = try database.query("SELECT 1")
            let table = counting {
                #expect(throws: DatabaseError.self) { try database.query("SELEKT 1") }
                #expect(throws: DatabaseError.self) { try database.query("SELECT * FROM no_such_table WHERE IdUser = ?", [.int(1)]) }
            }
            #expect(table.value(.databaseOtherErrors) == 2)
            #expect(table.value(.databaseConnectionErrors) == 0)
            var unreachable = try TestServices.settings()
            unreachable.port = 1
            unreachable.host = "127.0.0.1"
            unreachable.socket = nil
            let refused = counting {
                #expect(throws: DatabaseError.self) { try DatabaseConnection(settings: unreachable).query("SELECT 1") }
            }
            #expect(refused.value(.databaseConnectionErrors) >= 1)
        }

        @Test func redisAndS3ErrorsAreCounted() throws {
            let redis = RedisConnection(settings: try RedisSettings(url: "redis://127.0.0.1:1"))
            let bucket = S3Client(settings: try S3Settings(url: "http://key:secret@127.0.0.1:1/photos"))
            let table = counting {
                #expect(throws: RedisError.self) { try redis.command("PING") }
                #expect(throws: S3Error.self) { try bucket.exists("a") }
            }
            #expect(table.value(.redisConnectionErrors) >= 1)
            #expect(table.value(.s3TransferErrors) == 1)
        }

        /// An announcement the live feed did not take (nginx down, Redis behind Nchan restarting) is counted:
        /// subscribers missed it, and only a warning in the log said so.
        @Test func aLivePublishThatFailsIsCounted() throws {
            let unreachable = try #require(NchanPublisher(url: "http://127.0.0.1:1/ireporter-publish", key: "0123456789abcdef"))
            let table = counting { unreachable.publish(Array("{}".utf8)) }
            #expect(table.value(.livePublishFailures) == 1)
        }

        /// A host's stream answer listener that does not confirm a change (stopped) is counted once per change.
        @Test(.enabled(if: RedisTestServer.available)) func anUnconfirmedStreamChangeIsCounted() throws {
            var settings = RedisTestServer.shared.freshDatabase()
            settings.timeoutMillis = 200
            let silent = RedisConnection(settings: settings)
            try silent.subscribe(RedisStreamChanges.channel(settings))
            let counters = RedisCounters(settings: settings)
            let table = counting {
                #expect(throws: Never.self) { try counters.bumpStreamGeneration() }
            }
            #expect(table.value(.streamChangesUnconfirmed) == 1)
        }
    }
}
