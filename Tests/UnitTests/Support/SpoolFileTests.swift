#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

struct SpoolFileTests {
    /// The descriptors of this process open on `path` (by /proc, so that
    /// the tests running beside this one do not count).
    static func descriptors(openOn path: String) throws -> Int {
        try ScratchDirectory.names(in: "/proc/self/fd").count { name in
            var target = [CChar](repeating: 0, count: 4096)
            let length = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
            return length > 0 && String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) == path
        }
    }

    /// A failed write skips the close after it (`written ?? spool.close()`):
    /// the descriptor must not outlive the file's object all the same.
    @Test func itsDescriptorClosesWithIt() throws {
        let scratch = ScratchDirectory("spool-file")
        var spool: SpoolFile? = try SpoolFile(directory: scratch.path)
        let path = try #require(spool?.path)
        #expect(try Self.descriptors(openOn: path) == 1)
        spool = nil
        #expect(try Self.descriptors(openOn: path) == 0)
    }
}
