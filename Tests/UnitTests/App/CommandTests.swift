#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// Every command's rules on the in-memory stores: milliseconds, no service.
/// (The integration tests prove the same answers on MariaDB and the real
/// folders; the end-to-end tests, byte for byte through nginx and Apache.)
struct CommandTests {
    static let alice = #"{"result":[{"IdUser":"1","username":"alice"}]}"#
    let photo = makeJPEG(width: 640, height: 480)

    @Test func theAppsFlow() throws {
        let phone = try AppHarness()
        let secret = "18c69224371c58c547b68bfa6d28dc8aeff006e4"
        #expect(try phone.body([("command", "register"), ("username", "alice"), ("password", secret)]) == Self.alice)
        let registered = try #require(phone.cookie)
        #expect(try phone.body([("command", "login"), ("username", "ALICE "), ("password", secret)]) == Self.alice,
                "names compare as the column does")
        #expect(phone.cookie != registered, "a fresh session id at every login")
        #expect(phone.sessions.sessions.count == 1, "the old session is ended")
        #expect(try phone.body([("command", "upload"), ("title", "Sunset")], file: photo) == #"{"successful":1}"#)
        let stored = try #require(phone.files.photos[2])
        #expect(jpegSize(stored.photo)! == (640, 480))
        #expect(jpegSize(stored.thumbnail)! == (180, 180))
        #expect(phone.files.spoolFiles.isEmpty, "the clean copy was published, nothing left behind")
        let one = #"{"result":[{"IdPhoto":"2","title":"Sunset","IdUser":"1","username":"alice"}]}"#
        #expect(try phone.body([("command", "stream")]) == one)
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "2")]) == one)
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "3")]) == #"{"result":[]}"#)
        let logout = try phone.send([("command", "logout")])
        #expect(logout.body.isEmpty)
        #expect(logout.setCookie.first?.hasPrefix("PHPSESSID=deleted;") == true)
        #expect(phone.sessions.sessions.isEmpty)
        #expect(try phone.body([("command", "upload"), ("title", "again")], file: photo) == #"{"error":"Authorization required"}"#)
        #expect(phone.photos.rows.count == 1)
    }

    @Test func registrationRules() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        #expect(try phone.body([("command", "register"), ("username", "Alice"), ("password", "y")]) == #"{"error":"Username already exists"}"#)
        #expect(try phone.body([("command", "register"), ("username", "c+d%21"), ("password", "p")])
                == #"{"result":[{"IdUser":"2","username":"c d!"}]}"#, "decoded once more, as PHP's urldecode did")
        #expect(try phone.body([("command", "register"), ("username", String(repeating: "u", count: 46)), ("password", "p")])
                == #"{"error":"Registration failed"}"#)
        #expect(try phone.body([("command", "register"), ("username", "a\tb"), ("password", "p")])
                == #"{"error":"Usernames cannot contain control or invisible characters"}"#)
        #expect(phone.users.accounts.count == 2)
        #expect(phone.users.accounts.allSatisfy { String(decoding: $0.password, as: UTF8.self).hasPrefix("$argon2id$") })
    }

    @Test func beforeTheMigrationPasswordsAreStoredAsSentAndBoundedByTheColumn() throws {
        let phone = try AppHarness(hashesPasswords: false)
        #expect(try phone.body([("command", "register"), ("username", "v"), ("password", String(repeating: "p", count: 46))])
                == #"{"error":"Registration failed"}"#)
        try phone.send([("command", "register"), ("username", "bob"), ("password", "bobpass")])
        #expect(phone.users.accounts.map(\.password) == [Array("bobpass".utf8)])
    }

    @Test func aLegacyPasswordIsUpgradedAtLogin() throws {
        let phone = try AppHarness(hashesPasswords: false)
        try phone.send([("command", "register"), ("username", "bob"), ("password", "bobpass")])
        phone.users.hashesPasswords = true
        phone.users.passwordCapacity = 255
        #expect(try phone.body([("command", "login"), ("username", "bob"), ("password", "BOBPASS")])
                == #"{"result":[{"IdUser":"1","username":"bob"}]}"#)
        #expect(String(decoding: phone.users.accounts[0].password, as: UTF8.self).hasPrefix("$argon2id$"))
    }

    @Test func failedLoginsBackOff() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "right")])
        phone.cookie = nil
        for _ in 0..<4 {
            #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "wrong")]) == #"{"error":"Authorization failed"}"#)
        }
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "wrong")]) == #"{"error":"Authorization failed"}"#)
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "right")])
                == #"{"error":"Too many failed logins, try again in 1 seconds"}"#)
        #expect(phone.cookie == nil)
        phone.address = "192.0.2.2"
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "right")])
                == Self.alice, "another address is not blocked")
    }

    @Test func refusedUploadsStoreNothing() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        #expect(try phone.body([("command", "upload"), ("title", "no file")]) == #"{"error":"Upload malfunction"}"#)
        #expect(try phone.body([("command", "upload"), ("title", "text")], file: Array("not a photo".utf8))
                == #"{"error":"The photo is not a valid JPEG image"}"#)
        #expect(try phone.body([("command", "upload"), ("title", "a\u{7F}b")], file: photo)
                == #"{"error":"Titles cannot contain control characters"}"#)
        for invisible in ["a\u{200B}b", "\u{2060}", "a\u{FEFF}", "a\u{AD}b", "\u{E0041}\u{E0042}", "a\u{FFF9}b"] {
            #expect(try phone.body([("command", "upload"), ("title", invisible)], file: photo)
                    == #"{"error":"Titles cannot contain invisible characters"}"#)
        }
        for blank in ["   ", "\u{2800}", "\u{3000}"] {
            #expect(try phone.body([("command", "upload"), ("title", blank)], file: photo) == #"{"error":"Titles cannot be blank"}"#)
        }
        #expect(phone.photos.rows.isEmpty && phone.files.photos.isEmpty && phone.files.spoolFiles.isEmpty)
    }

    @Test func aPhotoWithNothingToStripIsStoredAsUploadedWithoutACopy() throws {
        let phone = try AppHarness()
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        // gd writes a comment ("CREATOR: gd-jpeg"): the copy without it is a clean photo.
        let withComment = phone.scratch.write("gd.jpg", photo)
        let cleanPath = try #require(try JPEGMetadataStripper.strip(from: withComment, orientation: 1) { phone.scratch.path + "/clean.jpg" })
        let clean = try #require(readFile(cleanPath))
        #expect(try phone.body([("command", "upload"), ("title", "clean")], file: clean) == #"{"successful":1}"#)
        #expect(phone.files.photos[2]?.photo == clean)
        #expect(phone.files.publishedFrom[2]?.hasPrefix(phone.scratch.path + "/.spool-") == true, "the upload's own file")
        #expect(try phone.body([("command", "upload"), ("title", "commented")], file: photo) == #"{"successful":1}"#)
        #expect(phone.files.photos[3]?.photo == clean, "stored without the comment")
        #expect(phone.files.publishedFrom[3]?.hasPrefix(phone.scratch.path) == false, "a stripped copy")
        #expect(phone.files.spoolFiles.isEmpty)
    }

    @Test func uploadsPerHourAreLimited() throws {
        var policy = AppHarness.cheapPolicy
        policy.uploadRateLimit = 2
        let phone = try AppHarness(policy: policy)
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        for _ in 0..<2 { #expect(try phone.body([("command", "upload"), ("title", "t")], file: photo) == #"{"successful":1}"#) }
        #expect(try phone.body([("command", "upload"), ("title", "t")], file: photo) == #"{"error":"Too many uploads, please try again later"}"#)
    }

    @Test func anUploadNotStoredWithinItsDeadlineIsDropped() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        // Its files are in place when the deadline passes: the last moment before the COMMIT.
        phone.files.beforeNextPublish = { phone.clock.advance(byMillis: 50_001) }
        #expect(try phone.body([("command", "upload"), ("title", "late")], file: photo)
                == #"{"error":"The server took too long to store the photo and did not keep it, please send it again"}"#)
        #expect(phone.photos.rows.isEmpty)
        #expect(phone.files.photos.isEmpty, "its files removed")
        #expect(phone.files.spoolFiles.isEmpty)
        #expect(try phone.body([("command", "stream")]) == #"{"result":[]}"#)

        phone.files.beforeNextPublish = { phone.clock.advance(byMillis: 50_000) }
        #expect(try phone.body([("command", "upload"), ("title", "in time")], file: photo) == #"{"successful":1}"#)
        #expect(phone.photos.rows.map(\.title) == [Array("in time".utf8)])

        // Overdue when it came (a wait for a worker): not even decoded.
        let late = try phone.send([("command", "upload"), ("title", "queued")], file: photo,
                                  arrived: phone.clock.now.advanced(bySeconds: -51))
        #expect(String(decoding: late.body, as: UTF8.self).contains("did not keep it"))
        #expect(late.imageMicros == 0 && phone.photos.rows.count == 1)

        var policy = AppHarness.cheapPolicy
        policy.uploadDeadline = 0
        let patient = try AppHarness(policy: policy)
        try patient.send([("command", "register"), ("username", "bob"), ("password", "p")])
        patient.files.beforeNextPublish = { patient.clock.advance(bySeconds: 3600) }
        #expect(try patient.body([("command", "upload"), ("title", "no deadline")], file: photo) == #"{"successful":1}"#)
    }

    @Test func previewsPerHourAreLimitedPerUser() throws {
        var policy = AppHarness.cheapPolicy
        policy.previewRateLimit = 2
        let phone = try AppHarness(policy: policy)
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        for _ in 0..<2 {
            let answer = try phone.send([("command", "preview"), ("effect", "sepia")], file: photo)
            #expect(answer.contentType == "image/jpeg" && jpegSize(answer.body) != nil)
        }
        #expect(try phone.body([("command", "preview"), ("effect", "sepia")], file: photo)
                == #"{"error":"Too many previews, please try again later"}"#)
        // Another user has previews of their own.
        try phone.send([("command", "register"), ("username", "bob"), ("password", "p")])
        #expect(try phone.send([("command", "preview"), ("effect", "sepia")], file: photo).contentType == "image/jpeg")
    }

    @Test func aPreviewIsRefusedAtOnceWhileEveryDecodeSlotIsTaken() throws {
        var policy = AppHarness.cheapPolicy
        policy.imageDecodeConcurrency = 1
        let gate: DecodeGate? = DecodeGate()
        let phone = try AppHarness(policy: policy, decodeGate: gate)
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        // Another worker's upload holds the one slot (it says when it has it) until told.
        let holding = ProcessSignal(), release = ProcessSignal()
        let worker = ChildProcess {
            try? gate.decoding(limit: 1) {
                holding.send()
                release.wait()
            }
            return 0
        }
        #expect(holding.wait(), "the other worker holds the slot")
        let started = MonotonicClock().now
        #expect(try phone.body([("command", "preview"), ("effect", "sepia")], file: photo)
                == #"{"error":"The server is busy with other photos, please try again"}"#)
        #expect(MonotonicClock().now.millis(since: started) < 1000, "refused at once, not after a wait")
        release.send()
        #expect(worker.wait(seconds: 10) == 0)
        #expect(try phone.send([("command", "preview"), ("effect", "sepia")], file: photo).contentType == "image/jpeg")
    }

    @Test func titlesAreCutOnACharacterBoundary() throws {
        let ascii = Array(repeating: UInt8(ascii: "T"), count: 120)
        #expect(TextRules.fitting(ascii, maxBytes: 100) == Array(ascii[..<100]))
        let accented = Array((String(repeating: "x", count: 99) + "é").utf8)
        #expect(TextRules.fitting(accented, maxBytes: 100) == Array(repeating: UInt8(ascii: "x"), count: 99))
        let latin1 = Array(repeating: UInt8(0xE9), count: 150) // not UTF-8: cut at the byte limit
        #expect(TextRules.fitting(latin1, maxBytes: 100).count == 100)
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        try phone.send([("command", "upload"), ("title", String(repeating: "x", count: 99) + "é")], file: photo)
        #expect(phone.photos.rows.first?.title == Array(repeating: UInt8(ascii: "x"), count: 99))
    }

    @Test func theStreamIsNewestFirstAndCachedUntilAnUpload() throws {
        var policy = AppHarness.cheapPolicy
        policy.streamCacheMillis = 60_000
        let phone = try AppHarness(policy: policy)
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        #expect(try phone.body([("command", "stream")]) == #"{"result":[]}"#)
        try phone.send([("command", "upload"), ("title", "one")], file: photo)
        try phone.send([("command", "upload"), ("title", "two")], file: photo)
        #expect(try phone.body([("command", "stream")])
                == #"{"result":[{"IdPhoto":"3","title":"two","IdUser":"1","username":"alice"},{"IdPhoto":"2","title":"one","IdUser":"1","username":"alice"}]}"#)
        try phone.photos.setAside(id: 3, reason: "test") // behind the server's back: the cache still answers
        #expect(try phone.body([("command", "stream")]).contains(#""title":"two""#))
        phone.counters.bumpStreamGeneration()
        #expect(try !phone.body([("command", "stream")]).contains(#""title":"two""#))
    }
}
