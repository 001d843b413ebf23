#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// Media never posted go after a day with their files; files no row names
/// go once they are older than any row can be; nothing younger is touched.
struct PendingMediaSweepTests {
    static let now: Int64 = 1_800_000_000
    let media = InMemoryMediaStore()
    let scratch = ScratchDirectory("media-sweep")

    func file(_ name: String, age: Int64) {
        _ = scratch.write(name, [0xFF, 0xD8])
        var times = [timespec(tv_sec: Int(Self.now - age), tv_nsec: 0), timespec(tv_sec: Int(Self.now - age), tv_nsec: 0)]
        utimensat(AT_FDCWD, "\(scratch.path)/\(name)", &times, 0)
    }

    /// A waiting media; `legacy`: its file named as an older version named it (by its key).
    func pending(_ name: String, age: Int64, legacy: Bool = false) throws -> Int64 {
        file(legacy ? name : String(MediaEndpoints.filePath(of: name, in: scratch.path).dropFirst(scratch.path.count + 1)), age: age)
        return try #require(try media.addPending(PendingMedia(userID: 1, file: name, width: 1, height: 1, description: nil,
                                                              focusX: nil, focusY: nil, created: Self.now - age),
                                                 limit: MediaEndpoints.maxPending))
    }

    @Test func staleMediaGoWithTheirFilesAndOrphanFilesOnceOlderThanAnyRow() throws {
        let day = MediaEndpoints.pendingSeconds
        let stale = try pending(".media-stale", age: day + 10)
        file(String(MediaEndpoints.filePath(of: ".media-stale", in: scratch.path).dropFirst(scratch.path.count + 1)) + ".held", age: day + 10)
        let staleOfOld = try pending(".media-old", age: day + 10, legacy: true)
        file(".media-old.held", age: day + 10)
        let fresh = try pending(".media-fresh", age: 60)
        let freshFile = String(MediaEndpoints.filePath(of: ".media-fresh", in: scratch.path).dropFirst(scratch.path.count + 1))
        file(".media-orphan-old", age: day + 3601)
        file(".media-orphan-young", age: day + 10)
        file(".spool-other", age: 10 * day)
        let sweep = PendingMediaSweep(media: media, spoolDirectory: scratch.path, now: Self.now)
        #expect(try sweep.run() == (media: 2, files: 1))
        #expect(try media.pending(id: stale) == nil && media.pending(id: staleOfOld) == nil && media.pending(id: fresh) != nil)
        #expect(try ScratchDirectory.names(in: scratch.path).sorted() == [freshFile, ".media-orphan-young", ".spool-other"].sorted(),
                "the upload folder's own sweep takes spool files")
        #expect(try sweep.run() == (media: 0, files: 0))
    }
}
