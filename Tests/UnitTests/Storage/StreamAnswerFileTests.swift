#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
@testable import IReporterKit

/// The full stream's answer in the file the host's nginx answers `stream`
/// from: kept only under the generation it was rendered under, removed by
/// every change before the change is answered, made again ahead of its end
/// by the answer refresher while nginx reads it.
struct StreamAnswerFileTests {
    let scratch = ScratchDirectory("stream-answer")
    let clock = ManualClock.startingAtTimeOfDay()
    let counters = SharedMemoryCounters(capacity: 64)
    var path: String { "\(scratch.path)/stream-answer" }

    func answerFile(maxAge: Int64 = 1000) -> StreamAnswerFile {
        let clock = clock
        let file = StreamAnswerFile(path: path, maxAgeMillis: maxAge, unixMillis: { clock.now.millis })
        counters.streamAnswer = file
        return file
    }

    func kept() -> String? { readFile(path).map { String(decoding: $0, as: UTF8.self) } }

    /// What nginx's read does to the file: its access time now, `seconds` after its change time.
    func markRead(seconds: Int = 1) {
        var info = stat()
        stat(path, &info)
        var times = [timespec(tv_sec: info.st_mtim.tv_sec + seconds, tv_nsec: info.st_mtim.tv_nsec), info.st_mtim]
        utimensat(AT_FDCWD, path, &times, 0)
    }

    @Test func anAnswerIsKeptWithItsEndAndAChangeRemovesIt() {
        let file = answerFile()
        let generation = counters.streamGeneration
        #expect(file.keep(Array(#"{"result":[]}"#.utf8), madeUnder: generation) { counters.streamGeneration })
        #expect(kept() == "\(clock.now.millis + 1000)\n{\"result\":[]}")
        #expect(scratch.entries == ["stream-answer", "stream-answer.lock"], "no temporary file left")
        counters.bumpStreamGeneration() // an upload, deletion, vote or comment, before it is answered
        #expect(kept() == nil)
        file.remove()
        #expect(kept() == nil, "removing none is no error")
    }

    /// Several hosts: only while the host's listener hears the others' changes.
    @Test func withSeveralHostsAnAnswerIsKeptOnlyWhileTheListenerListens() {
        let clock = clock
        let file = StreamAnswerFile(path: path, maxAgeMillis: 1000, needsListener: true, unixMillis: { clock.now.millis })
        let answer = Array(#"{"result":[]}"#.utf8)
        #expect(!file.keep(answer, madeUnder: 0) { 0 }, "nobody listens yet")
        #expect(scratch.entries == ["stream-answer.lock"], "its temporary file removed")
        file.listen()
        #expect(file.keep(answer, madeUnder: 0) { 0 })
        #expect(scratch.entries == ["stream-answer", "stream-answer.epoch", "stream-answer.listening", "stream-answer.lock"])
        file.listen()  // subscribed again (after a lost connection): what was kept before may have missed changes
        #expect(kept() == nil)
        #expect(file.keep(answer, madeUnder: 0) { 0 })
        file.stopListening()
        #expect(scratch.entries == ["stream-answer.epoch", "stream-answer.lock"], "the answer and the listener's mark gone")
        #expect(!file.keep(answer, madeUnder: 0) { 0 })
    }

    /// nginx's workers keep their copy of the answer while the count in
    /// `<path>.epoch` stays what it was when they read the file: every way
    /// the answer goes counts one, and the count is 8 bytes from the first.
    @Test func everyRemovalCountsOneInTheEpochNginxMaps() {
        let file = answerFile()
        let answer = Array(#"{"result":[]}"#.utf8)
        #expect(file.keep(answer, madeUnder: counters.streamGeneration) { counters.streamGeneration })
        #expect(!scratch.entries.contains("stream-answer.epoch"), "made by the first removal (the supervisor's, at start)")
        counters.bumpStreamGeneration()
        #expect(readFile(file.epochPath) == [1, 0, 0, 0, 0, 0, 0, 0], "8 bytes, the host's byte order")
        file.remove()  // none kept: counted all the same, it costs nothing
        file.listen()
        file.stopListening()
        #expect(readFile(file.epochPath) == [4, 0, 0, 0, 0, 0, 0, 0])
        #expect(scratch.entries == ["stream-answer.epoch", "stream-answer.lock"], "no temporary file left")
        // Another object for the same path (each worker makes its own) counts on the same word.
        let elsewhere = StreamAnswerFile(path: path, maxAgeMillis: 1000)
        elsewhere.remove()
        #expect(readFile(file.epochPath) == [5, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test func itsFolderIsWhereItIsMade() {
        #expect(StreamAnswerFile(path: "/run/ireporter/stream-answer", maxAgeMillis: 0).folder == "/run/ireporter")
        #expect(StreamAnswerFile(path: "/stream-answer", maxAgeMillis: 0).folder == "/")
        #expect(StreamAnswerFile(path: "stream-answer", maxAgeMillis: 0).folder == ".")
    }

    /// A reload: the old refresher's listener losing Redis on its way out
    /// leaves the new one's mark; its own goes.
    @Test func aListenerThatLosesRedisRemovesOnlyItsOwnMark() {
        let file = StreamAnswerFile(path: path, maxAgeMillis: 1000, needsListener: true)
        let answer = Array(#"{"result":[]}"#.utf8)
        file.listen(as: 101)
        file.listen(as: 202)
        #expect(file.keep(answer, madeUnder: 0) { 0 })
        file.stopListening(as: 101)
        #expect(readFile(file.listenerPath) == Array("202".utf8), "the new listener's mark stays")
        #expect(kept() == nil)
        #expect(file.keep(answer, madeUnder: 0) { 0 })
        file.stopListening(as: 202)
        #expect(scratch.entries == ["stream-answer.epoch", "stream-answer.lock"])
    }

    @Test func anAnswerRenderedBeforeAChangeIsNeverPutInPlaceAfterIt() {
        let file = answerFile()
        let before = counters.streamGeneration
        counters.bumpStreamGeneration() // while the answer was being rendered
        #expect(!file.keep(Array("old".utf8), madeUnder: before) { counters.streamGeneration })
        #expect(kept() == nil)
        #expect(scratch.entries == ["stream-answer.epoch", "stream-answer.lock"], "its temporary file removed")
    }

    @Test func dueOnlyWhenNginxReadItAndNearItsEnd() {
        let file = answerFile()
        #expect(!file.isDue(lead: 125), "none kept")
        file.keep(Array("[]".utf8), madeUnder: counters.streamGeneration) { counters.streamGeneration }
        clock.advance(byMillis: 800)
        markRead()
        #expect(!file.isDue(lead: 125), "read, not near its end")
        clock.advance(byMillis: 100)
        #expect(file.isDue(lead: 125))
        file.keep(Array("[]".utf8), madeUnder: counters.streamGeneration) { counters.streamGeneration }
        clock.advance(byMillis: 900)
        #expect(!file.isDue(lead: 125), "not read since made")
        #expect(file.state()?.read == false, "looking at it is not reading it")
        markRead(seconds: 0)
        #expect(file.isDue(lead: 125), "read in the clock tick it was made in (the file system's clock is coarse)")
    }

    @Test func theStreamCacheKeepsEachFullStreamItLoadsAsItAnswersIt() throws {
        let file = answerFile()
        let cache = StreamCache(counters: counters, maxAgeMillis: 1000, clock: clock, answerFile: file)
        let photo = PhotoRecord(id: 1, title: Array("first".utf8), userID: 1, username: Array("bob".utf8))
        var photos = [photo]
        var loads = 0
        let load = { () -> [PhotoRecord] in loads += 1; return photos }
        let answer = cache.answer(load)
        #expect(kept() == "\(clock.now.millis + 1000)\n" + String(decoding: answer, as: UTF8.self))
        photos.insert(PhotoRecord(id: 2, title: Array("second".utf8), userID: 1, username: Array("bob".utf8)), at: 0)
        counters.bumpStreamGeneration()
        #expect(kept() == nil)
        let next = cache.answer(load)
        #expect(loads == 2)
        #expect(String(decoding: next, as: UTF8.self).contains("second"))
        #expect(kept() == "\(clock.now.millis + 1000)\n" + String(decoding: next, as: UTF8.self))
        #expect(StreamCache(counters: counters, maxAgeMillis: 0, clock: clock, answerFile: file).answer(load) == next)
        counters.bumpStreamGeneration()
        _ = StreamCache(counters: counters, maxAgeMillis: 0, clock: clock, answerFile: file).answer(load)
        #expect(kept() == nil, "none with the cache off")
    }

    @Test func theRefresherMakesItAgainAheadWhileNginxReadsIt() throws {
        var policy = AppHarness.cheapPolicy
        policy.streamCacheMillis = 1000
        let phone = try AppHarness(policy: policy, sharedAnswers: SharedAnswerTable(slots: 8))
        try phone.send([("command", "register"), ("username", "bob"), ("password", "p")])
        var services = phone.services
        services.counters = counters
        services.streamAnswer = answerFile()
        let refresher = try #require(AnswerRefresher(services: services))
        _ = try phone.photos.add(userID: 1, title: Array("first".utf8), publish: { _ in }, unpublish: { _ in })
        try StreamCommand(services).remakeAnswerFile()
        _ = try phone.photos.add(userID: 1, title: Array("second".utf8), publish: { _ in }, unpublish: { _ in })
        clock.advance(byMillis: 900)
        #expect(refresher.refreshDue() == 0, "not read since made: left to end")
        #expect(kept()?.hasSuffix(#""title":"first","IdUser":"1","username":"bob"}]}"#) == true)
        markRead() // as that read did, at least a clock tick after the file was made
        #expect(refresher.refreshDue() == 1)
        #expect(kept()?.hasPrefix("\(clock.now.millis + 1000)\n{\"result\":[{\"IdPhoto\":\"3\",\"title\":\"second\"") == true)
        #expect(refresher.refreshDue() == 0, "just made")
    }
}
