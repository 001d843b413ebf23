#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// The stream answer files of several hosts sharing Redis (issue 30): a
/// change is answered only once every host's listener has removed its
/// file; a host whose listener is not subscribed keeps none. Each "host"
/// here is a listener and a file of its own, against the real redis-server.
@Suite(.enabled(if: RedisTestServer.available, "needs redis-server: scripts/deps.sh installs it"))
struct RedisStreamChangesIntegrationTests {
    let scratch = ScratchDirectory("stream-changes")
    let answer = Array(#"{"result":[]}"#.utf8)

    func hostFile(_ name: String) -> StreamAnswerFile {
        StreamAnswerFile(path: "\(scratch.path)/\(name)", maxAgeMillis: 60_000, needsListener: true)
    }

    func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// One host's listener on a database of its own, at a manual clock, subscribed, its file kept.
    func listeningHost() -> (RedisSettings, ManualClock, StreamAnswerFile, RedisStreamChangeListener) {
        let settings = RedisTestServer.shared.freshDatabase()
        let clock = ManualClock()
        let file = hostFile("host")
        let listener = RedisStreamChangeListener(settings: settings, file: file, clock: clock)
        listener.handleChanges(waitingUpTo: 0)
        #expect(file.keep(answer, madeUnder: 0) { 0 })
        return (settings, clock, file, listener)
    }

    @Test func aChangeIsAnsweredOnceEveryHostsFileIsGone() throws {
        var settings = RedisTestServer.shared.freshDatabase()
        settings.timeoutMillis = 20_000  // a bump that gave up waiting would take 10 s
        let counters = RedisCounters(settings: settings)
        // Once here first: a forked child must not be the first to run this code (ChildProcess).
        try counters.bumpStreamGeneration()
        let files = [hostFile("host1"), hostFile("host2")]
        let listeners = files.map { RedisStreamChangeListener(settings: settings, file: $0) }
        for listener in listeners { listener.handleChanges(waitingUpTo: 0) }
        #expect(listeners[0].isListening && listeners[1].isListening)
        let before = try counters.streamGeneration
        for file in files { #expect(file.keep(answer, madeUnder: before) { try? counters.streamGeneration }) }

        let started = monotonicMillis()
        // Another worker's upload, in a process of its own.
        let bump = ChildProcess { (try? RedisCounters(settings: settings).bumpStreamGeneration()) == nil ? 1 : 0 }
        // The first host hears it; the bump still waits for the second.
        while exists(files[0].path) && monotonicMillis() - started < 9000 { listeners[0].handleChanges(waitingUpTo: 20) }
        let unconfirmed = monotonicMillis()
        while monotonicMillis() - unconfirmed < 300 { listeners[0].handleChanges(waitingUpTo: 20) }
        #expect(!bump.hasExited, "answered while the second host's file was still there")
        #expect(exists(files[1].path))
        while !bump.hasExited && monotonicMillis() - started < 9000 {
            listeners[1].handleChanges(waitingUpTo: 20)
        }
        #expect(bump.wait() == 0)
        #expect(monotonicMillis() - started < 9000, "confirmed by both, not given up on")
        #expect(!exists(files[0].path) && !exists(files[1].path))
        #expect(!files[1].keep(answer, madeUnder: before) { try? counters.streamGeneration },
                "an answer rendered before the change is not put back")
        let after = try counters.streamGeneration
        #expect(files[1].keep(answer, madeUnder: after) { try? counters.streamGeneration })
    }

    @Test func aBumpWithNobodyListeningOrNobodyAnsweringDoesNotHang() throws {
        var settings = RedisTestServer.shared.freshDatabase()
        // Half of it (2 s) is waited for a silent subscriber: well above the 1 s
        // a bump with nobody listening may take on a busy machine.
        settings.timeoutMillis = 4000
        let counters = RedisCounters(settings: settings)
        var started = monotonicMillis()
        try counters.bumpStreamGeneration()
        #expect(monotonicMillis() - started < 1000, "no subscriber: nothing to wait for")
        // A subscriber that never confirms (a host's refresher stopped): waited for half the timeout, then logged.
        let silent = RedisConnection(settings: settings)
        try silent.subscribe(RedisStreamChanges.channel(settings))
        started = monotonicMillis()
        try counters.bumpStreamGeneration()
        let waited = monotonicMillis() - started
        #expect(waited >= 1950 && waited < 5000, "\(waited) ms")  // 2 s, as Redis counts it (its own clock, to the ms)
        #expect(try counters.streamGeneration == 2)
        #expect(try silent.receive(waitingMillis: 1000) != nil, "the message reached it")
    }

    @Test func aListenerThatLosesRedisRemovesTheFileAndListensAgainAtItsNextTry() throws {
        let (settings, clock, file, listener) = listeningHost()
        // Its connection dropped, as a Redis restart drops it (only this test's: the one on its database).
        let admin = RedisConnection(settings: settings)
        let clients = String(decoding: try admin.command("CLIENT", "LIST", "TYPE", "pubsub").bytes() ?? [], as: UTF8.self)
        let subscriber = try #require(clients.split(separator: "\n").first { $0.contains(" db=\(settings.database) ") })
        let id = try #require(subscriber.split(separator: " ").first { $0.hasPrefix("id=") }?.dropFirst(3))
        try admin.command("CLIENT", "KILL", "ID", String(id))
        listener.handleChanges(waitingUpTo: 2000)
        #expect(!listener.isListening)
        #expect(!exists(file.path) && !exists(file.listenerPath), "no answer kept that may miss a change")
        #expect(!file.keep(answer, madeUnder: 0) { 0 })
        listener.handleChanges(waitingUpTo: 0)
        #expect(!listener.isListening, "tried again a second later, not at once")
        clock.advance(byMillis: RedisStreamChangeListener.retryMillis)
        listener.handleChanges(waitingUpTo: 0)
        #expect(listener.isListening && exists(file.listenerPath))
        #expect(file.keep(answer, madeUnder: 0) { 0 })
    }

    @Test func anIdleListenerPingsAndStaysSubscribed() throws {
        let (settings, clock, file, listener) = listeningHost()
        clock.advance(byMillis: RedisStreamChangeListener.idlePingMillis)
        listener.handleChanges(waitingUpTo: 0)  // sends the ping
        listener.handleChanges(waitingUpTo: 1000)  // its answer (1 s: a busy machine)
        clock.advance(byMillis: Int64(settings.timeoutMillis))
        listener.handleChanges(waitingUpTo: 0)
        #expect(listener.isListening && exists(file.path), "the ping was answered: still listening, the answer kept")
        #expect(RedisStreamChanges.secondsText(1500) == "1.500" && RedisStreamChanges.secondsText(7) == "0.007")
    }
}
