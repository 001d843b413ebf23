#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// Worker states and counters in memory shared by the supervisor and its
/// worker processes (an anonymous shared mapping made before the first
/// fork): what the status page shows and what the watchdog reads.
final class Scoreboard: @unchecked Sendable {
    /// `accepting`: woken for a connection, in `accept()` and reading its
    /// parameters (php-fpm's "Reading headers"); the watchdog already times
    /// it, but it counts as a request only once the accept succeeded (the
    /// other workers woken for the same connection find none and go idle).
    enum State: Int64 { case free = 0, starting, idle, busy, accepting }

    struct Slot {
        var pid: Int32
        var state: State
        var generation: Int64
        var requestStartedMillis: Int64
        var requests: Int64
        var lastRequestMillis: Int64
        /// The worker's database connection's prepared statements (as of its last request).
        var preparedStatements: Int64
    }

    static let maxSlots = 512
    private static let headerWords = 8
    private static let slotWords = 8
    private enum Header: Int { case startedAt = 0, accepted, slow, maxActive, timedOut, crashed, active }
    private enum Field: Int { case pid = 0, state, generation, requestStarted, requests, lastRequest, preparedStatements }

    private let words: UnsafeMutablePointer<CLongLong>
    /// Each slot's request in service, `noteBytes` a slot: a length byte,
    /// then its text (`RequestNote`).
    private let notes: UnsafeMutablePointer<UInt8>
    private static let noteBytes = 256

    init(wallClock: any WallClock = RealtimeClock()) {
        let bytes = (Self.headerWords + Self.maxSlots * Self.slotWords) * 8
        words = sharedMemory(bytes: bytes, for: "scoreboard").bindMemory(to: CLongLong.self, capacity: bytes / 8)
        notes = sharedMemory(bytes: Self.maxSlots * Self.noteBytes, for: "scoreboard's requests")
            .bindMemory(to: UInt8.self, capacity: Self.maxSlots * Self.noteBytes)
        store(header: .startedAt, wallClock.unixSeconds)
    }

    // MARK: - counters

    var startedAt: Int64 { load(header: .startedAt) }
    var accepted: Int64 { load(header: .accepted) }
    var slowRequests: Int64 { load(header: .slow) }
    var maxActive: Int64 { load(header: .maxActive) }
    var timedOut: Int64 { load(header: .timedOut) }
    var crashed: Int64 { load(header: .crashed) }

    func countSlowRequest() { _ = csystem_add(words + Header.slow.rawValue, 1) }
    func countTimeout() { _ = csystem_add(words + Header.timedOut.rawValue, 1) }
    func countCrash() { _ = csystem_add(words + Header.crashed.rawValue, 1) }

    // MARK: - slots

    func slot(_ index: Int) -> Slot {
        Slot(pid: Int32(load(index, .pid)), state: State(rawValue: load(index, .state)) ?? .free,
             generation: load(index, .generation), requestStartedMillis: load(index, .requestStarted),
             requests: load(index, .requests), lastRequestMillis: load(index, .lastRequest),
             preparedStatements: load(index, .preparedStatements))
    }

    func freeSlot() -> Int? {
        (0..<Self.maxSlots).first { load($0, .state) == State.free.rawValue }
    }

    /// Taken for a worker about to be forked, before the fork: the worker
    /// may accept a request at once, and nothing the supervisor writes after
    /// the fork may turn its busy slot back (the watchdog skips a starting one).
    func reserve(_ index: Int, generation: Int64) {
        store(index, .pid, 0)
        store(index, .generation, generation)
        store(index, .requests, 0)
        store(index, .requestStarted, 0)
        store(index, .preparedStatements, 0)
        store(index, .state, State.starting.rawValue)
    }

    /// The forked worker's pid, once `fork` has told it.
    func assign(_ index: Int, pid: Int32) { store(index, .pid, Int64(pid)) }

    func release(_ index: Int) {
        // A worker that died busy never finished its request (one that died
        // accepting was never counted).
        if load(index, .state) == State.busy.rawValue { _ = csystem_add(words + Header.active.rawValue, -1) }
        store(index, .pid, 0)
        store(index, .state, State.free.rawValue)
    }

    func markIdle(_ index: Int) { store(index, .state, State.idle.rawValue) }

    /// Woken for a connection: timed by the watchdog from here on.
    func markAccepting(_ index: Int, now: Int64) {
        store(index, .requestStarted, now)
        store(index, .state, State.accepting.rawValue)
    }

    /// The accept succeeded: a request, counted. The start is stored again
    /// (busy must never go with a start of 0: the watchdog would take it
    /// for a request of hours).
    func markBusy(_ index: Int, startedMillis: Int64) {
        store(index, .requestStarted, startedMillis)
        store(index, .state, State.busy.rawValue)
        _ = csystem_add(words + Header.accepted.rawValue, 1)
        let active = Int64(csystem_add(words + Header.active.rawValue, 1))
        if active > load(header: .maxActive) { store(header: .maxActive, active) }
    }

    func finishRequest(_ index: Int, durationMillis: Int64) {
        _ = csystem_add(words + Header.active.rawValue, -1)
        _ = csystem_add(words + Self.headerWords + index * Self.slotWords + Field.requests.rawValue, 1)
        store(index, .lastRequest, durationMillis)
    }

    func setPreparedStatements(_ index: Int, _ count: Int) { store(index, .preparedStatements, Int64(count)) }

    /// The request a worker has begun to serve, for the watchdog's line and
    /// the status page (written by the worker alone, byte by byte, as each
    /// request begins; a reader racing the write may see a mix of two, which
    /// only ever names a request). `RequestNote` reads it.
    func noteRequest(_ index: Int, requestID: String, client: String, method: String, uri: String) {
        let start = notes + index * Self.noteBytes
        var count = 0
        // Byte by byte, no array of the fields: this runs at every request.
        func append(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                guard count < Self.noteBytes - 1 else { return }
                count += 1
                start[count] = byte
            }
        }
        let separator = CollectionOfOne(RequestNote.separator)
        append(requestID.utf8)
        append(separator)
        append(client.utf8)
        append(separator)
        append(method.utf8)
        append(separator)
        append(uri.utf8)
        start[0] = UInt8(count)
    }

    func request(_ index: Int) -> RequestNote {
        let start = notes + index * Self.noteBytes
        return RequestNote(text: String(decoding: UnsafeBufferPointer(start: start + 1, count: Int(start[0])), as: UTF8.self))
    }

    /// The slot a process occupies, if any.
    func index(of pid: Int32) -> Int? {
        (0..<Self.maxSlots).first { load($0, .pid) == Int64(pid) && load($0, .state) != State.free.rawValue }
    }

    var occupied: [(index: Int, slot: Slot)] {
        (0..<Self.maxSlots).compactMap { index in
            let slot = slot(index)
            return slot.state == .free ? nil : (index, slot)
        }
    }

    // MARK: - raw words

    private func load(header: Header) -> Int64 { Int64(csystem_load(words + header.rawValue)) }
    private func store(header: Header, _ value: Int64) { csystem_store(words + header.rawValue, CLongLong(value)) }
    private func load(_ index: Int, _ field: Field) -> Int64 {
        Int64(csystem_load(words + Self.headerWords + index * Self.slotWords + field.rawValue))
    }
    private func store(_ index: Int, _ field: Field, _ value: Int64) {
        csystem_store(words + Self.headerWords + index * Self.slotWords + field.rawValue, CLongLong(value))
    }
}

/// A request as the watchdog names the one it ends: method, URI (its
/// query's secrets filtered, as the access log writes it), the web
/// server's request id and the client. Kept with the URI last, so that a
/// long one is what the slot's bytes cut.
struct RequestNote {
    static let separator: UInt8 = 0x1F
    let text: String

    private var parts: [Substring] {
        text.split(separator: Character(Unicode.Scalar(Self.separator)), maxSplits: 3, omittingEmptySubsequences: false)
    }

    var method: String { parts.count == 4 ? String(parts[2]) : "-" }
    var uri: String { parts.count == 4 ? AccessLog.withoutSecrets(String(parts[3])) : "-" }

    /// `GET /iReporter/?… (request 4f2…, client 192.0.2.1)`.
    var description: String {
        let parts = parts
        guard parts.count == 4 else { return "-" }
        return "\(method) \(uri) (request \(parts[0]), client \(parts[1]))"
    }
}
