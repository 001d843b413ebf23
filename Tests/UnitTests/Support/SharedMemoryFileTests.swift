#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
@testable import IReporterKit

/// The host-wide state file: processes that do not descend from one another
/// (mod_fcgid's, CGI's) share it, whoever creates it first, whatever was
/// left in it.
@Suite(.serialized)
struct SharedMemoryFileTests {
    let scratch = ScratchDirectory("shared-state")
    var path: String { "\(scratch.path)/ireporter-shared-state" }

    /// Runs `body` in a forked process; true when it exited with status 0.
    private func inAnotherProcess(_ body: () -> Bool) -> Bool {
        ChildProcess { body() ? 0 : 1 }.wait() == 0
    }

    @Test func twoOpeningsShareCountersGenerationAndSeed() throws {
        let first = try SharedState.open(file: path)
        let second = try SharedState.open(file: path)
        first.counters.bumpStreamGeneration()
        #expect(second.counters.streamGeneration == 1)
        for _ in 0..<5 { try first.counters.recordFailure("login:name", threshold: 5, maxBlockSeconds: 60) }
        #expect(try second.counters.blockedMillis("login:name") != nil, "a key lands in the same entry for both")
        var info = stat()
        stat(path, &info)
        #expect(info.st_mode & 0o777 == 0o600)
    }

    @Test func processesCreatingItAtOnceEndUpWithOneState() throws {
        let children = (0..<6).map { _ in
            ChildProcess {
                guard let state = try? SharedState.open(file: path) else { return 1 }
                for _ in 0..<200 { state.counters.bumpStreamGeneration() }
                _ = state.counters.use("upload:7", limit: 1000, windowSeconds: 3600, at: state.counters.clock.now)
                return 0
            }
        }
        for child in children { #expect(child.wait() == 0) }
        let state = try SharedState.open(file: path)
        #expect(state.counters.streamGeneration == 1200, "no process set it up again under another")
        #expect(try state.counters.allow("upload:7", limit: 7, windowSeconds: 3600), "six counted, the seventh allowed")
        #expect(try !state.counters.allow("upload:7", limit: 7, windowSeconds: 3600))
    }

    @Test func aCorruptFileIsSetUpAgain() throws {
        scratch.write("ireporter-shared-state", Array(repeating: 0xA5, count: 9000))
        let state = try SharedState.open(file: path)
        #expect(state.counters.streamGeneration == 0)
        #expect(try state.counters.allow("k", limit: 1, windowSeconds: 60))
    }

    @Test func aFileFromAnEarlierBootIsSetUpAgain() throws {
        #expect(inAnotherProcess {
            guard let state = try? SharedState.open(file: path) else { return false }
            for _ in 0..<3 { state.counters.bumpStreamGeneration() }
            return true
        })
        // Another boot id in the header (offset 32): its mutexes may be held
        // by processes that no longer exist.
        let fd = open(path, O_WRONLY)
        _ = pwrite(fd, Array("00000000-0000-0000-0000-000000000000".utf8), 36, 32)
        close(fd)
        #expect(try SharedState.open(file: path).counters.streamGeneration == 0)
    }

    @Test func anotherLayoutInUseIsLeftAlone() throws {
        let inUse = try SharedMemoryFile.open(path: path, payloadBytes: 64, layout: 1) { _ in }
        #expect(throws: SharedMemoryFile.OpenError.self) {
            _ = try SharedMemoryFile.open(path: path, payloadBytes: 128, layout: 2) { _ in }
        }
        inUse.payload.storeBytes(of: 42, as: Int64.self)
        #expect(try SharedMemoryFile.open(path: path, payloadBytes: 64, layout: 1) { _ in }
            .payload.load(as: Int64.self) == 42, "the file is still the users' own")
    }

    @Test func anotherLayoutNobodyUsesIsReplaced() throws {
        #expect(inAnotherProcess { (try? SharedMemoryFile.open(path: path, payloadBytes: 64, layout: 1) { _ in }) != nil })
        var initialised = false
        _ = try SharedMemoryFile.open(path: path, payloadBytes: 128, layout: 2) { _ in initialised = true }
        #expect(initialised)
    }

    @Test func someoneElsesFileIsRefused() throws {
        guard geteuid() == 0 else { return } // only root can give a file away
        scratch.write("ireporter-shared-state", [])
        chown(path, 65534, 65534)
        #expect(throws: SharedMemoryFile.OpenError.self) { _ = try SharedState.open(file: path) }
    }

    @Test func oneSweepPerIntervalWhicheverProcessAsks() throws {
        let first = try SharedState.open(file: path)
        let second = try SharedState.open(file: path)
        #expect(first.sweepClock.claim(now: 1_000_000, intervalSeconds: 600))
        #expect(!second.sweepClock.claim(now: 1_000_001, intervalSeconds: 600), "another process swept a second ago")
        #expect(second.sweepClock.claim(now: 1_000_600, intervalSeconds: 600))
        #expect(first.sweepClock.claim(now: 999_000, intervalSeconds: 600), "a clock set back does not stop the sweeps")
    }

    @Test func aSlotHeldByAProcessThatDiedIsTakenOver() throws {
        let state = try SharedState.open(file: path)
        // The child dies holding every slot; the robust mutexes hand them on.
        #expect(inAnotherProcess {
            guard let mine = try? SharedState.open(file: path) else { return false }
            mine.hashingGate.withSlot(limit: 1) { _exit(0) }
        })
        var ran = false
        state.hashingGate.withSlot(limit: 1) { ran = true }
        #expect(ran)
    }
}
