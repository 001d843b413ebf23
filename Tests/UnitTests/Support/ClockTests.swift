#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
@testable import IReporterKit

struct ClockTests {
    let scratch = ScratchDirectory("clock")

    /// What repair's and the sessions' grace times rely on: a file just
    /// written is never younger than "now". Writes across a whole second's
    /// start (where `time(nil)`, read from the last tick, fell behind the
    /// kernel's finer file times), bounded to 1.5 s and 200,000 writes.
    @Test func aFileJustWrittenIsNeverInTheFuture() throws {
        let path = "\(scratch.path)/written"
        let clock = RealtimeClock()
        let start = clock.unixSeconds
        let deadline = monotonicMillis() + 1500
        var ahead = 0, writes = 0
        while clock.unixSeconds < start + 2, monotonicMillis() < deadline, writes < 200_000 {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            try #require(fd >= 0)
            _ = write(fd, "x", 1)
            close(fd)
            var info = stat()
            try #require(stat(path, &info) == 0)
            if Int64(info.st_mtim.tv_sec) > clock.unixSeconds { ahead += 1 }
            writes += 1
        }
        #expect(ahead == 0, "\(ahead) of \(writes) files were stamped after the clock's second")
    }
}
