#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Testing
@testable import IReporterKit
import TestSupport

/// A value written on one thread before a semaphore's signal, read on another after its wait.
private final class ResultBox<T>: @unchecked Sendable { var value: T? }

struct PHPSessionCodecTests {
    @Test func decodesWhatPHPWrites() throws {
        // IdUser as PHP stores a mysqli string, plus other types a PHP site may keep.
        let data = Array(#"IdUser|s:1:"7";n|i:-3;f|d:0.5;t|b:1;z|N;list|a:2:{i:0;s:1:"a";s:1:"k";a:0:{}}s|s:5:"a;|"b";"#.utf8)
        let entries = try PHPSessionCodec.decode(data)
        #expect(entries.map(\.0) == ["IdUser", "n", "f", "t", "z", "list", "s"])
        #expect(entries[0].1 == .string(Array("7".utf8)))
        #expect(entries[0].1.intValue == 7)
        #expect(entries[1].1 == .int(-3))
        #expect(entries[2].1 == .double("0.5"))
        #expect(entries[3].1 == .bool(true))
        #expect(entries[4].1 == .null)
        #expect(entries[5].1 == .serialized(Array(#"a:2:{i:0;s:1:"a";s:1:"k";a:0:{}}"#.utf8)))
        #expect(entries[6].1 == .string(Array(#"a;|"b"#.utf8)))
        // ...and writes it back byte for byte, so PHP reads what we wrote.
        #expect(PHPSessionCodec.encode(entries) == data)
    }

    @Test func encodesTheLoginSession() throws {
        #expect(PHPSessionCodec.encode([("IdUser", .string(Array("12".utf8)))]) == Array(#"IdUser|s:2:"12";"#.utf8))
        #expect(PHPSessionCodec.encode([("IdUser", .int(12))]) == Array("IdUser|i:12;".utf8))
        #expect(try PHPSessionCodec.decode([]).isEmpty)
    }

    @Test(arguments: [#"IdUser"#, #"IdUser|s:5:"7";"#, #"IdUser|s:-1:"";"#, #"IdUser|x:1;"#, #"a|a:99999999999999:{"#,
                      #"a|i:abc;"#, #"a|s:1:"7""#, #"a|O:3:"Foo":1:{s:1:"a";}"#])
    func rejectsMalformedData(_ text: String) {
        #expect(throws: PHPSessionCodecError.self) { try PHPSessionCodec.decode(Array(text.utf8)) }
    }
}

final class SessionFilesTests {
    let scratch = ScratchDirectory("sessions")
    var directory: String { scratch.path }
    let store: SessionFiles

    init() {
        store = SessionFiles(directory: scratch.path, idleTimeout: 3600)
    }

    func write(_ name: String, _ text: String) {
        scratch.write(name, Array(text.utf8))
    }

    func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    @Test func newIDsAre160BitsInPHPsAlphabet() {
        let ids = (0..<200).map { _ in SessionID.new() }
        #expect(Set(ids).count == 200)
        for id in ids {
            #expect(id.count == 32)
            #expect(id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x76) })
        }
    }

    @Test func createLoadDestroy() throws {
        let session = try store.create([("IdUser", .string(Array("7".utf8)))], user: 7)
        let path = "\(directory)/sess_\(session.id)"
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let loaded = try #require(try store.load(id: Array(session.id.utf8)))
        #expect(loaded["IdUser"]?.intValue == 7)
        store.destroy(id: session.id)
        #expect(!exists(path))
        #expect(try store.load(id: Array(session.id.utf8)) == nil)
    }

    @Test func readsASessionThePHPVersionWrote() throws {
        write("sess_c1i1l468b9reah059gijqe41q8", #"IdUser|s:1:"1";"#)
        let session = try #require(try store.load(id: Array("c1i1l468b9reah059gijqe41q8".utf8)))
        #expect(session["IdUser"] == .string(Array("1".utf8)))
        // The longest id a PHP site's files handler keeps (session.sid_length up to 250).
        let longest = String(repeating: "a1,-", count: 62) + "b2"
        write("sess_" + longest, #"IdUser|s:1:"2";"#)
        #expect(try store.load(id: Array(longest.utf8))?["IdUser"] == .string(Array("2".utf8)))
        #expect(!SessionID.isWellFormed(Array((longest + "c").utf8)), "no file name holds more")
    }

    @Test(arguments: ["../../etc/passwd", "sess", "a/b/c/d/e/f/g/h/i/j/k/l/m", String(repeating: "a", count: 10_000),
                      "abcdefghijklmnopqrstuvwxyz\u{0}", "abcdefghijklmnopqrstuv wxyz", "short", "abcdefghijklmnopqrstuvwxyz;"])
    func hostileIDsNeverReachTheFileSystem(_ id: String) throws {
        #expect(!SessionID.isWellFormed(Array(id.utf8)))
        #expect(try store.load(id: Array(id.utf8)) == nil)
    }

    @Test func unknownWellFormedIDIsNotASession() throws {
        #expect(try store.load(id: Array("abcdefghijklmnopqrstuvwxyz012345".utf8)) == nil)
        #expect(!exists("\(directory)/sess_abcdefghijklmnopqrstuvwxyz012345"))
    }

    @Test func aSymlinkedSessionFileIsNotFollowed() throws {
        #expect(symlink("/etc/passwd", "\(directory)/sess_abcdefghijklmnopqrstuvwxyz012345") == 0)
        #expect(try store.load(id: Array("abcdefghijklmnopqrstuvwxyz012345".utf8)) == nil)
    }

    @Test func expiredSessionsAreIgnoredAndSwept() throws {
        let old = try store.create([("IdUser", .string(Array("1".utf8)))], user: 1)
        let fresh = try store.create([("IdUser", .string(Array("2".utf8)))], user: 2)
        var times = [timespec(tv_sec: time(nil) - 7200, tv_nsec: 0), timespec(tv_sec: time(nil) - 7200, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, "\(directory)/sess_\(old.id)", &times, 0) == 0)
        #expect(try store.load(id: Array(old.id.utf8)) == nil)
        write("not-a-session", "x")
        #expect(store.sweep() == 1)
        #expect(!exists("\(directory)/sess_\(old.id)"))
        #expect(exists("\(directory)/sess_\(fresh.id)"))
        #expect(exists("\(directory)/not-a-session"))
    }

    @Test func aSessionLivesTheIdleTimeoutFromItsLastUseOnTheStoresClock() throws {
        let clock = ManualClock.startingAtTimeOfDay()
        let store = SessionFiles(directory: directory, idleTimeout: 3600, absoluteTimeout: 30 * 86400, clock: clock)
        let session = try store.create([("IdUser", .string(Array("1".utf8)))], user: 1)
        clock.advance(bySeconds: 3000)
        #expect(try store.load(id: Array(session.id.utf8)) != nil, "used after 50 minutes: marked used then")
        clock.advance(bySeconds: 3000)
        #expect(try store.load(id: Array(session.id.utf8)) != nil, "50 minutes after its last use")
        #expect(store.sweep() == 0)
        clock.advance(bySeconds: 3601)
        #expect(try store.load(id: Array(session.id.utf8)) == nil, "idle for an hour")
        #expect(store.sweep() == 1)
    }

    /// Debian's /var/lib/php/sessions is 1733: anyone may create a file there.
    @Test func aFileSomeoneElseWroteIsNoSession() throws {
        let id = "abcdefghijklmnopqrstuvwxyz012345"
        write("sess_\(id)", #"IdUser|s:1:"7";"#)
        #expect(try store.load(id: Array(id.utf8)) != nil)
        #expect(chmod("\(directory)/sess_\(id)", 0o666) == 0)
        #expect(try store.load(id: Array(id.utf8)) == nil, "others may write it")
        #expect(chmod("\(directory)/sess_\(id)", 0o620) == 0)
        #expect(try store.load(id: Array(id.utf8)) == nil, "its group may write it")
        #expect(chmod("\(directory)/sess_\(id)", 0o600) == 0)
        if geteuid() == 0 {  // (make test runs as root: give it away)
            #expect(chown("\(directory)/sess_\(id)", 65534, 65534) == 0)
            #expect(try store.load(id: Array(id.utf8)) == nil, "another user's file")
        }
    }

    /// Planted under a session's or an index's name (the folder is 1733): a
    /// FIFO, whose open would wait for a writer, and a file its owner holds
    /// locked. Each is refused before any wait: no worker held.
    @Test func aPlantedFIFOHoldsNoWorker() throws {
        let id = "abcdefghijklmnopqrstuvwxyz012345"
        let fifo = "\(directory)/sess_\(id)"
        #expect(mkfifo(fifo, 0o666) == 0)
        let refused: Bool? = returnsPromptly(unblock: { close(open(fifo, O_WRONLY | O_NONBLOCK)) }) { [store] in
            (try? store.load(id: Array(id.utf8))) == nil
        }
        #expect(refused == true)
    }

    @Test func aPlantedFileItsOwnerHoldsLockedHoldsNoWorker() throws {
        let id = "abcdefghijklmnopqrstuvwxyz012345"
        write("sess_\(id)", #"IdUser|s:1:"7";"#)
        write("ireporter-sessions-7", "")
        var holders: [Int32] = []
        for name in ["sess_\(id)", "ireporter-sessions-7"] {
            #expect(chmod("\(directory)/\(name)", 0o620) == 0)
            let holder = open("\(directory)/\(name)", O_RDONLY)
            #expect(flock(holder, LOCK_EX) == 0)
            holders.append(holder)
        }
        defer { holders.forEach { close($0) } }
        let unlock = { holders.forEach { flock($0, LOCK_UN) } }
        let loaded: Bool? = returnsPromptly(unblock: unlock) { [store] in (try? store.load(id: Array(id.utf8))) == nil }
        #expect(loaded == true, "refused")
        let capped = SessionFiles(directory: directory, idleTimeout: 3600, maxPerUser: 1)
        let created: Bool? = returnsPromptly(unblock: unlock) { (try? capped.create([], user: 7)) != nil }
        #expect(created == true, "made, uncapped (the index is not ours)")
        let destroyed: Void? = returnsPromptly(unblock: unlock) { [store] in store.destroy(id: id) }
        #expect(destroyed != nil)
        #expect(exists("\(directory)/sess_\(id)"), "not ours to remove")
    }

    /// `body`'s result, or nil when it has not returned within 10 s (a
    /// failure, not a hung test: `unblock` then lets it end).
    private func returnsPromptly<T>(unblock: () -> Void, _ body: @escaping @Sendable () -> T) -> T? {
        let result = ResultBox<T>(), done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { result.value = body(); done.signal() }
        if done.wait(timeout: .now() + 10) == .success { return result.value }
        unblock()
        done.wait()
        return nil
    }

    @Test func aUsersOldestSessionsEndBeyondTheLimit() throws {
        let capped = SessionFiles(directory: directory, idleTimeout: 3600, maxPerUser: 3)
        let sevens = try (0..<5).map { _ in try capped.create([("IdUser", .string(Array("7".utf8)))], user: 7) }
        let eight = try capped.create([("IdUser", .string(Array("8".utf8)))], user: 8)
        #expect(sevens.prefix(2).allSatisfy { !exists("\(directory)/sess_\($0.id)") })
        #expect(sevens.suffix(3).allSatisfy { exists("\(directory)/sess_\($0.id)") })
        #expect(exists("\(directory)/sess_\(eight.id)"))
        // A logout frees a place: the next login ends no other session.
        capped.destroy(id: sevens[3].id)
        let next = try capped.create([("IdUser", .string(Array("7".utf8)))], user: 7)
        #expect([sevens[2], sevens[4], next].allSatisfy { exists("\(directory)/sess_\($0.id)") })
        let index = String(decoding: try #require(readFile("\(directory)/ireporter-sessions-7")), as: UTF8.self)
        #expect(index == [sevens[2], sevens[4], next].map { $0.id + "\n" }.joined())
    }

    /// `change_password` and `delete_account`: with or without a cap, the
    /// index lists every session of the user, and all of them but one end.
    @Test(arguments: [0, 5])
    func aUsersSessionsEndButTheOneKept(maxPerUser: Int) throws {
        let files = SessionFiles(directory: directory, idleTimeout: 3600, maxPerUser: maxPerUser)
        let sevens = try (0..<3).map { _ in try files.create([("IdUser", .string(Array("7".utf8)))], user: 7) }
        let eight = try files.create([("IdUser", .string(Array("8".utf8)))], user: 8)
        try files.endSessions(of: 7, except: sevens[1].id)
        #expect(!exists("\(directory)/sess_\(sevens[0].id)") && !exists("\(directory)/sess_\(sevens[2].id)"))
        #expect(exists("\(directory)/sess_\(sevens[1].id)") && exists("\(directory)/sess_\(eight.id)"))
        try files.endSessions(of: 7, except: nil)
        #expect(!exists("\(directory)/sess_\(sevens[1].id)") && exists("\(directory)/sess_\(eight.id)"))
    }

    @Test func sessionsAreNotEndedThroughAnIndexSomeoneElseWrote() throws {
        let files = SessionFiles(directory: directory, idleTimeout: 3600)
        let victim = try files.create([("IdUser", .string(Array("8".utf8)))], user: 8)
        write("ireporter-sessions-7", victim.id + "\n")
        #expect(chmod("\(directory)/ireporter-sessions-7", 0o666) == 0)
        #expect(throws: SystemError.self) { try files.endSessions(of: 7, except: nil) }
        #expect(exists("\(directory)/sess_\(victim.id)"))
    }

    @Test func anIndexSomeoneElseWroteIsIgnored() throws {
        let capped = SessionFiles(directory: directory, idleTimeout: 3600, maxPerUser: 1)
        let victim = try capped.create([("IdUser", .string(Array("8".utf8)))], user: 8)
        write("ireporter-sessions-7", victim.id + "\n")
        #expect(chmod("\(directory)/ireporter-sessions-7", 0o666) == 0)
        _ = try capped.create([("IdUser", .string(Array("7".utf8)))], user: 7)
        #expect(exists("\(directory)/sess_\(victim.id)"), "a forged index must not end others' sessions")
    }

    /// Where anyone may create files (PHP's 1733 folder), an index that
    /// cannot be opened must not lock its user out.
    @Test func anIndexThatCannotBeOpenedLeavesLoginsWorking() throws {
        let capped = SessionFiles(directory: directory, idleTimeout: 3600, maxPerUser: 1)
        #expect(symlink("/nonexistent", "\(directory)/ireporter-sessions-7") == 0)
        #expect(mkdir("\(directory)/ireporter-sessions-8", 0o777) == 0)
        for user: Int64 in [7, 8] {
            let first = try capped.create([("IdUser", .string(Array(String(user).utf8)))], user: user)
            _ = try capped.create([("IdUser", .string(Array(String(user).utf8)))], user: user)
            #expect(exists("\(directory)/sess_\(first.id)"), "uncapped: the index is not ours")
            #expect(throws: SystemError.self) { try capped.endSessions(of: user, except: nil) }
        }
    }

    @Test func staleIndexesAreSwept() throws {
        let capped = SessionFiles(directory: directory, idleTimeout: 3600, absoluteTimeout: 7200, maxPerUser: 3)
        _ = try capped.create([("IdUser", .string(Array("7".utf8)))], user: 7)
        _ = try capped.create([("IdUser", .string(Array("8".utf8)))], user: 8)
        var times = [timespec(tv_sec: time(nil) - 7300, tv_nsec: 0), timespec(tv_sec: time(nil) - 7300, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, "\(directory)/ireporter-sessions-7", &times, 0) == 0)
        capped.sweep()
        #expect(!exists("\(directory)/ireporter-sessions-7"))
        #expect(exists("\(directory)/ireporter-sessions-8"))
    }

    @Test func unreadableDataIsAnEmptySession() throws {
        write("sess_abcdefghijklmnopqrstuvwxyz012345", "garbage")
        let session = try #require(try store.load(id: Array("abcdefghijklmnopqrstuvwxyz012345".utf8)))
        #expect(session["IdUser"] == nil)
    }
}
