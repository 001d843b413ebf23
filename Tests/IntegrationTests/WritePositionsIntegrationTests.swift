#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// Where each user's last write position is kept for replica reads: in
/// Redis (several hosts) and in files beside the sessions (one host).
struct WritePositionsIntegrationTests {
    private func roundTrip(_ positions: any WritePositions) throws {
        #expect(try positions.position(of: 7) == nil, "a user who never wrote")
        try positions.remember("0-1-41", of: 7)
        try positions.remember("0-1-42", of: 7)
        try positions.remember("0-1-43", of: 8)
        #expect(try positions.position(of: 7) == "0-1-42", "the last one")
        #expect(try positions.position(of: 8) == "0-1-43")
    }

    @Test(.enabled(if: RedisTestServer.available, "needs redis-server: scripts/deps.sh installs it"))
    func inRedisWithAnExpiry() throws {
        let settings = RedisTestServer.shared.freshDatabase()
        try roundTrip(RedisWritePositions(settings: settings))
        let ttl = try RedisConnection(settings: settings).command("TTL", "ireporter:gtid:7").integer()
        #expect((86_390...86_400).contains(ttl))
    }

    @Test func inFilesBesideTheSessionsReplacedWhole() throws {
        let sessions = ScratchDirectory("write-positions")
        try roundTrip(WritePositionFiles(directory: sessions.path))
        #expect(sessions.entries == ["ireporter-gtid-7", "ireporter-gtid-8"], "no temporary file left")
        #expect(throws: SystemError.self) { try WritePositionFiles(directory: "\(sessions.path)/missing").remember("0-1-1", of: 7) }
    }
}
