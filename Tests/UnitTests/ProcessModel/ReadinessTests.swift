#if canImport(Glibc)
import Glibc
#endif
@testable import IReporterKit
import Testing
import TestSupport

struct ReadinessTests {
    final class Service {
        var down: String?
        var asked = 0
    }

    @Test func readyUntilAServiceIsDownAndThenNamedWithWhatWentWrong() {
        let database = Service(), redis = Service()
        let clock = ManualClock()
        let readiness = Readiness(probes: [
            .init(name: "database") { database.asked += 1; return database.down },
            .init(name: "redis") { redis.asked += 1; return redis.down },
        ], clock: clock)
        #expect(readiness.failures().isEmpty)
        database.down = "Can't connect to server on '127.0.0.1' (111)"
        clock.advance(byMillis: Readiness.keptMillis)
        #expect(readiness.failures() == ["database: Can't connect to server on '127.0.0.1' (111)"])
        redis.down = "connection refused"
        clock.advance(byMillis: Readiness.keptMillis)
        #expect(readiness.failures() == ["database: Can't connect to server on '127.0.0.1' (111)", "redis: connection refused"])
    }

    @Test func aBalancersPollingAsksEachServiceOnceASecond() {
        let database = Service()
        let clock = ManualClock()
        let readiness = Readiness(probes: [.init(name: "database") { database.asked += 1; return database.down }], clock: clock)
        for _ in 0..<20 { _ = readiness.failures() }
        #expect(database.asked == 1)
        database.down = "gone"
        clock.advance(byMillis: Readiness.keptMillis - 1)
        #expect(readiness.failures().isEmpty, "kept for a second")
        clock.advance(byMillis: 1)
        #expect(readiness.failures() == ["database: gone"])
        #expect(database.asked == 2)
    }

    /// A host whose upload folder is full or read-only stores no upload:
    /// out of the balancer's rotation until it can (a statvfs, no write).
    @Test func aFullOrReadOnlyUploadFolderIsNotReady() {
        let scratch = ScratchDirectory("ready")
        #expect(Readiness.uploadFolderFailure(scratch.path) == nil)
        #expect(Readiness.uploadFolderFailure("\(scratch.path)/gone")?.hasSuffix("No such file or directory") == true)
        var info = statvfs()
        (info.f_bavail, info.f_favail, info.f_frsize) = (1000, 1000, 4096)
        #expect(Readiness.uploadFolderFailure("/u", FolderSpace(info)) == nil)
        #expect(FolderSpace(info).freeBytes == 4_096_000, "the metric's figure")
        info.f_bavail = 0
        #expect(Readiness.uploadFolderFailure("/u", FolderSpace(info)) == "/u is full")
        (info.f_bavail, info.f_favail) = (1000, 0)
        #expect(Readiness.uploadFolderFailure("/u", FolderSpace(info)) == "/u is full", "no file can be made")
        (info.f_favail, info.f_flag) = (1000, UInt(ST_RDONLY))
        #expect(Readiness.uploadFolderFailure("/u", FolderSpace(info)) == "/u is on a file system mounted read-only")
    }
}
