#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import CSystem
import TestSupport

struct PasswordHasherTests {
    let hasher: PasswordHasher = {
        var parameters = PasswordHasher.Parameters()
        parameters.memoryKiB = 64
        parameters.iterations = 1
        return PasswordHasher(parameters: parameters)
    }()

    @Test func hashesAreSaltedPHCStringsThatVerify() {
        let first = hasher.hash(Array("secret".utf8))
        let second = hasher.hash(Array("secret".utf8))
        #expect(first != second, "a fresh salt every time")
        #expect(String(decoding: first, as: UTF8.self).hasPrefix("$argon2id$v=19$m=64,t=1,p=1$"))
        #expect(hasher.verify(Array("secret".utf8), against: first) == .match(upgrade: false))
        #expect(hasher.verify(Array("Secret ".utf8), against: first) == .match(upgrade: false), "collation-equivalent")
        #expect(hasher.verify(Array("secreT!".utf8), against: first) == .mismatch)
        #expect(hasher.verify([], against: first) == .mismatch)
    }

    @Test func defaultsAreOWASPs() {
        #expect(PasswordHasher.Parameters().memoryKiB == 19 * 1024)
        #expect(PasswordHasher.Parameters().iterations == 2)
        #expect(PasswordHasher.Parameters().parallelism == 1)
        let stored = PasswordHasher().hash(Array("x".utf8))
        #expect(String(decoding: stored, as: UTF8.self).hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(hasher.verify(Array("x".utf8), against: stored) == .match(upgrade: true), "other parameters: upgrade")
    }

    @Test func legacyPlainValuesMatchLikeTheOldCollation() {
        let stored = Array("18c69224371c58c547b68bfa6d28dc8aeff006e4".utf8)
        #expect(hasher.verify(stored, against: stored) == .match(upgrade: true))
        #expect(hasher.verify(Array("18C69224371C58C547B68BFA6D28DC8AEFF006E4 ".utf8), against: stored) == .match(upgrade: true))
        #expect(hasher.verify(Array("18c69224371c58c547b68bfa6d28dc8aeff006e".utf8), against: stored) == .mismatch)
    }

    @Test(arguments: ["$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$", "$argon2id$v=18$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
                      "$argon2id$v=19$m=99999999,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", "$argon2id$v=19$m=64$x$y",
                      "$argon2id$v=19$m=64,t=1,p=1$!!!$aGFzaGhhc2hoYXNoaGFzaA", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"])
    func malformedHashesNeverMatch(_ stored: String) {
        #expect(hasher.verify(Array("secret".utf8), against: Array(stored.utf8)) != .match(upgrade: false))
    }

    @Test func base64DecodesWithAndWithoutPadding() {
        #expect(Base64.decode("c2FsdHNhbHQ") == Array("saltsalt".utf8))
        #expect(Base64.decode("YQ==") == Array("a".utf8))
        #expect(Base64.decode("YWI") == Array("ab".utf8))
        #expect(Base64.decode("Y") == nil)
        #expect(Base64.decode("*") == nil)
    }
}


struct HashingGateTests {
    /// Forks `workers` processes that each, in a slot, wait until `limit`
    /// hold one or no other is left to come (at most 10 s), note how many
    /// hold one then, and leave; returns the most any of them saw.
    func mostAtOnce(gate: HashingGate, limit: Int, workers: Int) -> Int64 {
        let bytes = (workers + 2) * 8
        let counters = sharedMemory(bytes: bytes, for: "test counters").bindMemory(to: Int64.self, capacity: workers + 2)
        defer { munmap(counters, bytes) }
        let holding = counters, entered = counters + workers + 1
        // Once here first: a forked child of this multi-threaded test process
        // must not be the first to resolve the generic code's metadata (a
        // runtime lock another thread held at fork time would never be freed).
        gate.withSlot(limit: limit) {}
        let children = (0..<workers).map { index in
            ChildProcess {
                gate.withSlot(limit: limit) {
                    csystem_add(holding, 1)
                    csystem_add(entered, 1)
                    let clock = MonotonicClock(), deadline = clock.now.advanced(bySeconds: 10)
                    while csystem_load(holding) < limit && csystem_load(entered) < workers && clock.now < deadline {
                        usleep(1000)
                    }
                    csystem_store(counters + 1 + index, csystem_load(holding))
                    csystem_add(holding, -1)
                }
                return 0
            }
        }
        for child in children { #expect(child.wait() == 0) }
        return (0..<workers).map { csystem_load(counters + 1 + $0) }.max() ?? 0
    }

    @Test func boundsHashesAcrossProcessesToTheLimit() {
        let gate = HashingGate()
        #expect(mostAtOnce(gate: gate, limit: 2, workers: 6) == 2)
        #expect(mostAtOnce(gate: gate, limit: 1, workers: 3) == 1)
    }

    @Test func aSlotHeldByAKilledWorkerIsTakenOver() {
        let gate = HashingGate()
        gate.withSlot(limit: 1) {}  // (see mostAtOnce)
        let holder = ChildProcess { gate.withSlot(limit: 1) { () -> Int32 in _exit(0) } }  // dies holding the only slot
        #expect(holder.wait() == 0)
        #expect(gate.withSlot(limit: 1) { true })
    }

    @Test func theHasherVerifiesThroughTheGate() {
        let hasher = PasswordHasher(parameters: PasswordHasherTests().hasher.parameters, gate: HashingGate(), concurrentHashes: 1)
        let stored = hasher.hash(Array("secret".utf8))
        #expect(hasher.verify(Array("secret".utf8), against: stored) == .match(upgrade: false))
        #expect(hasher.verify(Array("other".utf8), against: stored) == .mismatch)
    }
}

final class JPEGMetadataStripperTests {
    let scratch = ScratchDirectory("strip")
    var directory: String { scratch.path }

    /// What is stored: the copy, or the file itself when it had nothing to strip.
    func roundTrip(_ bytes: [UInt8], orientation: Int = 1) throws -> [UInt8] {
        let target = "\(directory)/out.jpg"
        let source = scratch.write("in.jpg", bytes)
        let copy = try JPEGMetadataStripper.strip(from: source, orientation: orientation) { target }
        #expect(copy == nil || copy == target)
        return try #require(readFile(copy ?? source))
    }

    /// A hand-made JPEG structure: the stripper never decodes, it walks markers.
    func structure(_ segments: [[UInt8]], scan: [UInt8], trailer: [UInt8] = []) -> [UInt8] {
        [0xFF, 0xD8] + segments.flatMap { $0 } + [0xFF, 0xDA, 0x00, 0x04, 0xAA, 0xBB] + scan + [0xFF, 0xD9] + trailer
    }

    func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    @Test func dropsEXIFXMPCommentsAndTrailersKeepsTheRest() throws {
        let jfif = segment(0xE0, Array("JFIF\0\u{1}\u{1}".utf8))
        let icc = segment(0xE2, Array("ICC_PROFILE\0\u{1}\u{1}profile".utf8))
        let adobe = segment(0xEE, Array("Adobe\0d".utf8))
        let dqt = segment(0xDB, [0x00] + Array(repeating: 1, count: 64))
        // Scan data with stuffed bytes, a restart marker, and an FF D9 look-alike after stuffing.
        let scan: [UInt8] = [0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0xFF, 0xFF, 0x00, 0x78]
        let input = structure([jfif, segment(0xE1, Array("Exif\0\0GPS".utf8)), segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0<xmp/>".utf8)),
                               segment(0xED, Array("Photoshop 3.0\0IPTC".utf8)), segment(0xFE, Array("secret comment".utf8)),
                               segment(0xE2, Array("MPF\0data".utf8)), icc, adobe, dqt],
                              scan: scan, trailer: Array("appended trailer with GPS".utf8))
        let output = try roundTrip(input)
        #expect(output == structure([jfif, icc, adobe, dqt], scan: scan))
    }

    @Test func orientationIsKeptAsALoneTag() throws {
        let dqt = segment(0xDB, [0x00] + Array(repeating: 1, count: 64))
        let output = try roundTrip(structure([segment(0xE1, Array("Exif\0\0whatever".utf8)), dqt], scan: [1, 2, 3]), orientation: 6)
        #expect(output == structure([JPEGMetadataStripper.orientationSegment(6), dqt], scan: [1, 2, 3]))
        let plain = try roundTrip(structure([dqt], scan: [1]), orientation: 1)
        #expect(plain == structure([dqt], scan: [1]), "orientation 1 needs no tag")
    }

    @Test func progressiveScansAndTablesBetweenThemSurvive() throws {
        let dht = segment(0xC4, [0x00, 0x01, 0xFF, 0xD9]) // table bytes that look like EOI
        let input: [UInt8] = [0xFF, 0xD8] + dht + [0xFF, 0xDA, 0x00, 0x04, 0x01, 0x02, 0x10, 0x20]
            + dht + segment(0xE1, Array("Exif\0\0late".utf8)) + [0xFF, 0xDA, 0x00, 0x04, 0x03, 0x04, 0x30, 0x40, 0xFF, 0xD9]
        let expected: [UInt8] = [0xFF, 0xD8] + dht + [0xFF, 0xDA, 0x00, 0x04, 0x01, 0x02, 0x10, 0x20]
            + dht + [0xFF, 0xDA, 0x00, 0x04, 0x03, 0x04, 0x30, 0x40, 0xFF, 0xD9]
        #expect(try roundTrip(input) == expected)
    }

    @Test func aCleanFileIsNotCopied() throws {
        let jfif = segment(0xE0, Array("JFIF\0\u{1}\u{1}".utf8))
        let dqt = segment(0xDB, [0x00] + Array(repeating: 1, count: 64))
        let clean = structure([jfif, dqt], scan: [0x12, 0xFF, 0x00, 0xFF, 0xD1, 0xFF, 0xFF, 0x00, 0x34])
        var asked = false
        let copy = try JPEGMetadataStripper.strip(from: scratch.write("clean.jpg", clean), orientation: 1) {
            asked = true
            return "\(directory)/copy.jpg"
        }
        #expect(copy == nil && !asked, "nothing to strip: no copy, not even an empty file")
        // Each thing the copy would leave out makes one, whole.
        let dirty: [(String, [UInt8])] = [
            ("comment", structure([jfif, segment(0xFE, Array("home".utf8)), dqt], scan: [1])),
            ("trailer", structure([jfif, dqt], scan: [1], trailer: [0x00])),
            ("fill bytes before a segment", structure([jfif, [0xFF], dqt], scan: [1])),
            ("fill bytes before the end", [0xFF, 0xD8] + jfif + dqt + [0xFF, 0xDA, 0x00, 0x04, 0xAA, 0xBB, 1, 0xFF, 0xFF, 0xD9]),
        ]
        for (what, bytes) in dirty {
            unlink("\(directory)/out.jpg")
            #expect(try roundTrip(bytes) == structure([jfif, dqt], scan: [1]), "\(what)")
        }
        #expect(try roundTrip(structure([jfif, dqt], scan: [1]), orientation: 3)
            == structure([jfif, JPEGMetadataStripper.orientationSegment(3), dqt], scan: [1]), "an orientation to write back")
    }

    @Test func brokenFilesAreRefusedAndLeaveNoOutput() {
        #expect(throws: JPEGMetadataStripper.Failure.notAJPEG) { try self.roundTrip(Array("GIF89a".utf8)) }
        #expect(throws: JPEGMetadataStripper.Failure.self) { try self.roundTrip([0xFF, 0xD8, 0xFF, 0xE1, 0x00]) }
        #expect(throws: JPEGMetadataStripper.Failure.self) { try self.roundTrip([0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x01]) }
        #expect(throws: JPEGMetadataStripper.Failure.self) { try self.roundTrip([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0x11]) }
        #expect(access("\(directory)/out.jpg", F_OK) != 0)
    }
}

/// A username in the lines fail2ban reads cannot end the line or move the
/// address: quotes and backslashes escaped, every other byte outside
/// printable ASCII as \xNN.
struct SecurityLogTests {
    @Test func usernamesAreQuotedSoNoNameForgesALine() {
        #expect(SecurityLog.quoted(Array("alice".utf8)) == #""alice""#)
        #expect(SecurityLog.quoted(Array(#"x" from 198.51.100.1"#.utf8)) == #""x\" from 198.51.100.1""#)
        #expect(SecurityLog.quoted(Array(#"y\"#.utf8)) == #""y\\""#)
        #expect(SecurityLog.quoted([0x7A, 0x0A, 0x0D, 0x00, 0xC3, 0xA9, 0x7F]) == #""z\x0a\x0d\x00\xc3\xa9\x7f""#)
    }

    @Test func aLongNameIsCutWithTheCountOfWhatFollowed() {
        #expect(SecurityLog.quoted(Array(repeating: 0x61, count: 64)) == "\"" + String(repeating: "a", count: 64) + "\"")
        let megabyte = SecurityLog.quoted(Array(repeating: 0xFF, count: 1 << 20))
        #expect(megabyte == "\"" + String(repeating: #"\xff"#, count: 64) + #"\+1048512""#)
    }
}
