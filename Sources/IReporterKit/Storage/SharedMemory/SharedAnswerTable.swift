#if canImport(Glibc)
import Glibc
#endif

/// Rendered answers kept in memory that every worker of one supervisor
/// maps (made before it forks them), so that a question asked through any
/// of them is answered from the database once per `stream_cache_ms`, not
/// once per worker: with four workers, a phone's home feed refreshed by
/// each of them every second cost four times the statements, in bursts that
/// made the timeline's slowest requests (issue 28).
///
/// What is kept is only ever served for the stream generation it was made
/// under and within its age (`AnswerCache`, the tier in front of it, asks
/// with both), so sharing it changes no rule. The table has a fixed size:
/// each key may sit in one of `ways` slots from its hash; a new answer takes
/// the key's own slot, else a free one, else the oldest. Past what it holds
/// (a busy host's every viewer of the last second) workers fall back to
/// their own caches; answers bigger than a slot are not shared. One robust
/// process-shared mutex guards it, held for a copy of at most a slot; a
/// slot is marked free before it is written and named last, so a worker
/// killed while writing leaves a free slot, never a torn answer.
final class SharedAnswerTable: @unchecked Sendable {
    private struct Header {
        /// The key's hash; 0: a free slot.
        var hash: UInt64
        var generation: Int64
        var madeAt: Int64
        /// When a request last asked for it (found it, or made it).
        var askedAt: Int64
        var keyLength: Int32
        var bodyLength: Int32
    }

    /// A home timeline's page (20 statuses, ~30 KB) fits.
    static let slotBytes = 32768
    /// Ways enough that a set seldom holds more keys in use than slots
    /// (which would make its keys push each other out at every refresh).
    static let ways = 8
    /// The largest key and answer a slot holds together.
    static var capacity: Int { slotBytes - MemoryLayout<Header>.stride }

    private let slots: Int
    private let mutex: SharedMutex
    private let memory: UnsafeMutableRawPointer

    /// Bytes a table of `slots` slots takes.
    static func bytes(slots: Int) -> Int { SharedMutex.stride + slots * slotBytes }

    /// A table in memory shared with the processes this one forks: 512
    /// slots, 16 MiB at most (memory is only taken as answers are kept).
    convenience init(slots: Int = 512) {
        self.init(memory: sharedMemory(bytes: Self.bytes(slots: slots), for: "shared answers"), slots: slots, initialize: true)
    }

    /// The table at `memory` (`bytes(slots:)`, zeroed when new): set up
    /// there when `initialize`, else used as the process that did left it.
    init(memory: UnsafeMutableRawPointer, slots: Int, initialize: Bool) {
        precondition(slots >= Self.ways && slots % Self.ways == 0, "whole sets of slots")
        self.slots = slots
        mutex = initialize ? SharedMutex(initializingAt: memory) : SharedMutex(at: memory)
        self.memory = memory + SharedMutex.stride
        for slot in 0..<slots { _ = (self.memory + slot * Self.slotBytes).bindMemory(to: Header.self, capacity: 1) }
    }

    /// The answer kept for `key` under `generation` and made at `madeSince`
    /// or later, with when it was made; a request asking at `askedAt` (nil:
    /// not a request's question) is noted for the `AnswerRefresher`.
    func find(_ key: [UInt8], generation: Int64, madeSince: Int64, askedAt: Int64? = nil) -> (body: [UInt8], madeAt: Int64)? {
        guard !key.isEmpty else { return nil }
        let wanted = Self.hash(key)
        return locked {
            for slot in set(of: wanted) {
                let header = header(slot).pointee
                guard header.hash == wanted, header.generation == generation, header.madeAt >= madeSince,
                      holds(key, slot) else { continue }
                if let askedAt { self.header(slot).pointee.askedAt = max(header.askedAt, askedAt) }
                let body = data(slot) + key.count
                return ([UInt8](UnsafeRawBufferPointer(start: body, count: Int(header.bodyLength))), header.madeAt)
            }
            return nil
        }
    }

    /// Keeps `body` as the answer for `key` (not empty) made under
    /// `generation` at `madeAt`; does nothing when the two do not fit in a
    /// slot. Made for a request (`asked`), it counts as asked at `madeAt`;
    /// made again ahead of the requests, it keeps when it was last asked.
    func keep(_ body: [UInt8], for key: [UInt8], generation: Int64, madeAt: Int64, asked: Bool = true) {
        guard !key.isEmpty, key.count + body.count <= Self.capacity else { return }
        let wanted = Self.hash(key)
        locked {
            let candidates = set(of: wanted)
            let own = candidates.first { header($0).pointee.hash == wanted && holds(key, $0) }
            let slot = own
                ?? candidates.first { header($0).pointee.hash == 0 }
                ?? candidates.min { header($0).pointee.madeAt < header($1).pointee.madeAt }!
            let named = header(slot)
            let askedAt = asked ? madeAt : own.map { _ in named.pointee.askedAt } ?? 0
            named.pointee.hash = 0
            key.withUnsafeBytes { data(slot).copyMemory(from: $0.baseAddress!, byteCount: key.count) }
            body.withUnsafeBytes { bytes in
                if let start = bytes.baseAddress { (data(slot) + key.count).copyMemory(from: start, byteCount: body.count) }
            }
            named.pointee = Header(hash: wanted, generation: generation, madeAt: madeAt, askedAt: askedAt,
                                   keyLength: Int32(key.count), bodyLength: Int32(body.count))
        }
    }

    /// The names starting with `prefix` whose answers (of `generation`)
    /// are due to be made again ahead of the requests at `now`: asked for
    /// since they were made, within `lead` of the end of their lifetime
    /// (`lifetime(named:maxAge:)`) or past it, and made less than twice
    /// `maxAge` ago (older ones are left to the requests).
    func due(prefix: [UInt8], generation: Int64, now: Int64, maxAge: Int64, lead: Int64) -> [[UInt8]] {
        locked {
            var names: [[UInt8]] = []
            for slot in 0..<slots {
                let header = header(slot).pointee
                guard header.hash != 0, header.generation == generation, header.askedAt >= header.madeAt,
                      Int(header.keyLength) >= prefix.count,
                      prefix.isEmpty || prefix.withUnsafeBytes({ memcmp($0.baseAddress!, data(slot), prefix.count) == 0 })
                else { continue }
                let age = now - header.madeAt
                // The slot's hash is its name's: the lifetime without reading the name.
                if age >= Self.lifetime(hash: header.hash, maxAge: maxAge) - lead && age < 2 * maxAge {
                    names.append([UInt8](UnsafeRawBufferPointer(start: data(slot), count: Int(header.keyLength))))
                }
            }
            return names
        }
    }

    /// How long the answers named `name` are served: between three
    /// quarters of `maxAge` and all of it, fixed by the name, so that
    /// answers made together (the viewers of a busy second) are made again
    /// apart rather than all at once every `maxAge`.
    static func lifetime(named name: [UInt8], maxAge: Int64) -> Int64 { lifetime(hash: hash(name), maxAge: maxAge) }

    private static func lifetime(hash: UInt64, maxAge: Int64) -> Int64 {
        guard maxAge >= 4 else { return maxAge }
        return maxAge - Int64(hash % UInt64(maxAge / 4))
    }

    private func set(of hash: UInt64) -> Range<Int> {
        let first = Int(hash % UInt64(slots / Self.ways)) * Self.ways
        return first..<first + Self.ways
    }

    private func header(_ slot: Int) -> UnsafeMutablePointer<Header> {
        (memory + slot * Self.slotBytes).assumingMemoryBound(to: Header.self)
    }

    private func data(_ slot: Int) -> UnsafeMutableRawPointer {
        memory + slot * Self.slotBytes + MemoryLayout<Header>.stride
    }

    private func holds(_ key: [UInt8], _ slot: Int) -> Bool {
        Int(header(slot).pointee.keyLength) == key.count
            && key.withUnsafeBytes { memcmp($0.baseAddress!, data(slot), key.count) == 0 }
    }

    private func locked<T>(_ body: () -> T) -> T {
        mutex.lock()
        defer { mutex.unlock() }
        return body()
    }

    /// FNV-1a: every process must place a key alike (Swift's `Hasher` is
    /// seeded per process).
    static func hash(_ key: [UInt8]) -> UInt64 {
        var value: UInt64 = 0xcbf29ce484222325
        for byte in key {
            value ^= UInt64(byte)
            value = value &* 0x100000001b3
        }
        return value == 0 ? 1 : value
    }
}
