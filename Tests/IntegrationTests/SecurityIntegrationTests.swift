#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// Passwords, throttling, upload limits and metadata, against the real MariaDB.
extension DatabaseTests {
@Suite struct SecurityIntegrationTests {
    static let hash = "18c69224371c58c547b68bfa6d28dc8aeff006e4"
    let photo = makeJPEG(width: 640, height: 480)

    private func storedPass(_ phone: APIHarness, _ name: String) throws -> String {
        String(decoding: try phone.database.query("SELECT pass FROM login WHERE username = ?", [.bytes(Array(name.utf8))])[0][0]!,
               as: UTF8.self)
    }

    @Test func passwordsAreStoredAsArgon2idOnceTheColumnIsWide() throws {
        let phone = try APIHarness(hashedPasswords: true)
        #expect(try phone.body([("command", "register"), ("username", "alice"), ("password", Self.hash)])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        let stored = try storedPass(phone, "alice")
        #expect(stored.hasPrefix("$argon2id$v=19$m=64,t=1,p=1$"))
        #expect(!stored.contains(Self.hash))
        // The original's collation: upper-case hex and trailing spaces still log in.
        #expect(try phone.body([("command", "login"), ("username", "ALICE "), ("password", Self.hash.uppercased() + "  ")])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "wrong")]) == #"{"error":"Authorization failed"}"#)
    }

    @Test func narrowColumnKeepsWorkingWithPlainValues() throws {
        let phone = try APIHarness()
        #expect(try phone.body([("command", "register"), ("username", "alice"), ("password", Self.hash)])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        #expect(try storedPass(phone, "alice") == Self.hash)
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", Self.hash)])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
    }

    @Test func passwordsAreHashedOnceTheWidenedColumnIsSeenAMinuteLater() throws {
        let phone = try APIHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "alicepass")])
        try TestServices.runSQLFile(phone.database, "migrations/001-widen-pass.sql")  // under the running server
        try phone.send([("command", "register"), ("username", "bob"), ("password", "bobpass")])
        #expect(try storedPass(phone, "bob") == "bobpass", "the column was looked at less than a minute ago")
        phone.clock.advance(bySeconds: 60)
        try phone.send([("command", "register"), ("username", "carol"), ("password", "carolpass")])
        #expect(try storedPass(phone, "carol").hasPrefix("$argon2id$"))
    }

    @Test func aColumnNarrowedUnderARunningServerNeverGetsACutHash() throws {
        // The migration undone while a server runs: it still believes the
        // column wide (it looks again once a minute).
        func undoMigration(_ phone: APIHarness, plain name: String) throws {
            try phone.database.execute("UPDATE login SET pass = 'plainpass' WHERE username = ?", [.bytes(Array(name.utf8))])
            try phone.database.execute("ALTER TABLE login MODIFY pass varchar(45) NOT NULL DEFAULT ''")
        }
        let phone = try APIHarness(hashedPasswords: true)
        try phone.database.execute("INSERT INTO login (username, pass) VALUES ('alice', ?)", [.bytes(Array(Self.hash.utf8))])
        #expect(try phone.body([("command", "register"), ("username", "bob"), ("password", "bobpass")])
                == #"{"result":[{"IdUser":"2","username":"bob"}]}"#)  // it has seen the wide column
        try undoMigration(phone, plain: "bob")
        // A login would upgrade alice's plain value: the hash no longer fits, so it stays.
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", Self.hash)])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        #expect(try storedPass(phone, "alice") == Self.hash, "not replaced by a hash cut to 45 characters")
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", Self.hash)])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)

        // A worker that saw the column wide (its registration of `name`,
        // hashed, is IdUser `id`), then the migration undone again.
        func workerThatSawTheWideColumn(registering name: String, as id: Int) throws -> IReporterAPI {
            try TestServices.runSQLFile(phone.database, "migrations/001-widen-pass.sql")
            let worker = phone.anotherWorker()
            #expect(try phone.body([("command", "register"), ("username", name), ("password", "\(name)pass")], through: worker)
                    == #"{"result":[{"IdUser":"\#(id)","username":"\#(name)"}]}"#)
            try undoMigration(phone, plain: name)
            return worker
        }
        // A registration in that window finds the hash does not fit, looks
        // at the column again and stores the value as sent ...
        let other = try workerThatSawTheWideColumn(registering: "dave", as: 3)
        #expect(try phone.body([("command", "register"), ("username", "carol"), ("password", "carolpass")], through: other)
                == #"{"result":[{"IdUser":"4","username":"carol"}]}"#)
        #expect(try storedPass(phone, "carol") == "carolpass")
        #expect(try phone.body([("command", "login"), ("username", "carol"), ("password", "carolpass")], through: other)
                == #"{"result":[{"IdUser":"4","username":"carol"}]}"#)
        // ... unless it is longer than the narrow column takes: refused, nothing stored.
        let third = try workerThatSawTheWideColumn(registering: "erin", as: 5)
        #expect(try phone.body([("command", "register"), ("username", "frank"), ("password", String(repeating: "f", count: 46))],
                               through: third) == #"{"error":"Registration failed"}"#)
        #expect(try phone.rowCount("login") == 5)
    }

    @Test func legacyRowsAreUpgradedAtLoginAndByTheMigration() throws {
        let phone = try APIHarness(hashedPasswords: true)
        // Rows the PHP version wrote: the password as the app sent it.
        try phone.database.execute("INSERT INTO login (username, pass) VALUES ('alice', ?), ('bob', 'bobpass')", [.bytes(Array(Self.hash.utf8))])
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", Self.hash)])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        #expect(try storedPass(phone, "alice").hasPrefix("$argon2id$"), "re-hashed at its first login")
        #expect(try storedPass(phone, "bob") == "bobpass")
        // The migration command's work: every remaining legacy row becomes the hash of itself.
        let users = MariaDBUserStore(database: phone.database)
        let hasher = PasswordHasher(parameters: APIHarness.fastHashing.passwordHashing)
        for (userID, stored) in try users.legacyPasswords(after: 0, limit: 100) {
            try users.replacePassword(userID: userID, old: stored, new: hasher.hash(stored))
        }
        #expect(try users.legacyPasswordCount() == 0)
        #expect(try phone.body([("command", "login"), ("username", "bob"), ("password", "BOBPASS")])
                == #"{"result":[{"IdUser":"2","username":"bob"}]}"#)
        // Stronger parameters later: the next login upgrades the hash.
        var stronger = APIHarness.fastHashing
        stronger.passwordHashing.iterations = 2
        #expect(try phone.body([("command", "login"), ("username", "bob"), ("password", "bobpass")],
                               through: phone.anotherWorker(policy: stronger))
                == #"{"result":[{"IdUser":"2","username":"bob"}]}"#)
        #expect(try storedPass(phone, "bob").hasPrefix("$argon2id$v=19$m=64,t=2,p=1$"))
    }

    /// An account the web client made before issue 24 (Argon2id of the typed
    /// password) logs in once with the typed password beside the app's
    /// value; the stored hash is then of the app's value, which alone logs in
    /// from then on, and the typed password alone no longer does.
    @Test func aWebMadeAccountIsUpgradedAtItsFirstLoginWithTheTypedPassword() throws {
        let phone = try APIHarness(hashedPasswords: true)
        let hasher = PasswordHasher(parameters: APIHarness.fastHashing.passwordHashing)
        try phone.database.execute("INSERT INTO login (username, pass) VALUES ('wendy', ?)", [.bytes(hasher.hash(Array("typed pw".utf8)))])
        let before = try storedPass(phone, "wendy")
        let app = String(decoding: AppPassword.derived(fromTyped: Array("typed pw".utf8)), as: UTF8.self)
        let signedIn = #"{"result":[{"IdUser":"1","username":"wendy"}]}"#
        #expect(try phone.body([("command", "login"), ("username", "wendy"), ("password", app)]) == #"{"error":"Authorization failed"}"#)
        #expect(try phone.body([("command", "login"), ("username", "wendy"), ("password", app), ("legacy_password", "typed pw")]) == signedIn)
        let after = try storedPass(phone, "wendy")
        #expect(after != before && after.hasPrefix("$argon2id$v=19$m=64,t=1,p=1$"))
        #expect(hasher.verify(Array(app.utf8), against: Array(after.utf8)) == .match(upgrade: false), "the app's value's hash")
        #expect(try phone.body([("command", "login"), ("username", "wendy"), ("password", app)], through: phone.anotherWorker()) == signedIn)
        #expect(try phone.body([("command", "login"), ("username", "wendy"), ("password", "typed pw")]) == #"{"error":"Authorization failed"}"#)
    }

    /// On the shared-memory counters the workers use, through their injected
    /// clock (stepped here: the 1 s block is never raced, issue 24, 7).
    @Test func failedLoginsBackOffPerNameAndAddress() throws {
        let phone = try APIHarness(hashedPasswords: true)
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "right")])
        phone.clock.advance(byMillis: 999)  // the failures late in a second
        for _ in 0..<4 {
            #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "guess")]) == #"{"error":"Authorization failed"}"#)
        }
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "guess")]) == #"{"error":"Authorization failed"}"#)
        // The 5th failure blocks this name from this address, even the right password, for all of its second.
        let blocked = #"{"error":"Too many failed logins, try again in 1 seconds"}"#
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "right")]) == blocked)
        phone.clock.advance(byMillis: 999)
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "right")]) == blocked)
        // The real user from elsewhere is not locked out.
        phone.address = "198.51.100.7"
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "right")])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        // And here, once the block is over.
        phone.address = "192.0.2.1"
        phone.clock.advance(byMillis: 1)
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "right")])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
    }

    @Test func theInMemoryStoreComparesNamesAsMariaDBDoes() throws {
        let phone = try APIHarness()
        let users = MariaDBUserStore(database: phone.database)
        for byte in UInt8.min...UInt8.max {
            #expect(try users.accountKey(for: [0x61, byte]) == Latin1SwedishCollation.weights(of: [0x61, byte]), "byte \(byte)")
        }
        let names: [[UInt8]] = [Array("carol".utf8), Array("CAROL  ".utf8), [0x63, 0xC3, 0x72, 0xD5, 0x6C], Array("carol\t".utf8),
                                Array("é".utf8), [0xE9], [], Array("  ".utf8), Array("ss".utf8), [0xDF]]
        for name in names { #expect(try users.accountKey(for: name) == Latin1SwedishCollation.weights(of: name), "\(name)") }
        // Equal keys exactly when the column matches the names alike.
        try phone.database.execute("INSERT INTO login (username, pass) VALUES ('carol', 'x')")
        for name in names {
            let matches = try !users.accounts(named: name).isEmpty
            #expect(matches == (try users.accountKey(for: name) == users.accountKey(for: Array("carol".utf8))), "\(name)")
        }
    }

    @Test func everySpellingOfANameSharesItsCounters() throws {
        let phone = try APIHarness(hashedPasswords: true)
        _ = try phone.send([("command", "register"), ("username", "carol"), ("password", "right")])
        phone.cookie = nil
        // c\xC3r\xD5l (invalid UTF-8) is carol to the column: it logs in ...
        #expect(try phone.body([("command", "login"), ("username", "c%C3r%D5l"), ("password", "right")])
                == #"{"result":[{"IdUser":"1","username":"carol"}]}"#)
        // ... so its failures count against carol, whatever the spelling.
        phone.address = "198.51.100.10"
        for spelling in ["c%C3r%D5l", "CAROL", "carol ", "c%E3r%F5l", "%C7%C0R%D3L"] {
            #expect(try phone.body([("command", "login"), ("username", spelling), ("password", "guess")]) == #"{"error":"Authorization failed"}"#)
        }
        let blocked = try phone.body([("command", "login"), ("username", "carol"), ("password", "right")])
        #expect(blocked.hasPrefix(#"{"error":"Too many failed logins, try again in "#), "\(blocked)")
    }

    @Test func aBackOffSurvivesAFloodOfFreshKeys() throws {
        let phone = try APIHarness(hashedPasswords: true)  // counters: a table of 1,024 entries
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "right")])
        // Backed off for 128 s: 12 failures (a guesser waiting out each block,
        // or guesses in flight together, get there).
        let throttle = LoginThrottle(counters: phone.counters)
        let alice = try MariaDBUserStore(database: phone.database).accountKey(for: Array("alice".utf8))
        for _ in 0..<12 { try throttle.failed(account: alice, address: "198.51.100.10") }
        #expect((127...128).contains(try throttle.wait(account: alice, address: "198.51.100.10") ?? 0))
        phone.address = "198.51.100.10"
        let before = try phone.body([("command", "login"), ("username", "alice"), ("password", "right")])
        #expect(before.hasPrefix(#"{"error":"Too many failed logins, try again in "#), "\(before)")
        // The issue's attack: 3,000 failed logins with fresh names from 3,000 addresses (9,000 keys).
        for index in 0..<3000 {
            phone.address = "10.0.\(index / 256).\(index % 256)"
            #expect(try phone.body([("command", "login"), ("username", "fresh\(index)"), ("password", "x")])
                    == #"{"error":"Authorization failed"}"#)
        }
        phone.address = "198.51.100.10"
        let after = try phone.body([("command", "login"), ("username", "alice"), ("password", "right")])
        #expect(after.hasPrefix(#"{"error":"Too many failed logins, try again in "#), "\(after): the block was wiped")
    }

    @Test func uploadsPerUserAreLimited() throws {
        var policy = APIHarness.fastHashing
        policy.uploadRateLimit = 2
        let phone = try APIHarness(policy: policy)
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        #expect(try phone.body([("command", "upload"), ("title", "1")], file: photo) == #"{"successful":1}"#)
        #expect(try phone.body([("command", "upload"), ("title", "2")], file: photo) == #"{"successful":1}"#)
        #expect(try phone.body([("command", "upload"), ("title", "3")], file: photo) == #"{"error":"Too many uploads, please try again later"}"#)
        #expect(try phone.rowCount("photos") == 2)
    }

    @Test func controlCharactersAreRefused() throws {
        let phone = try APIHarness()
        #expect(try phone.body([("command", "register"), ("username", "al\nice"), ("password", "x")])
                == #"{"error":"Usernames cannot contain control or invisible characters"}"#)
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        #expect(try phone.body([("command", "upload"), ("title", "a\u{0}b")], file: photo) == #"{"error":"Titles cannot contain control characters"}"#)
        #expect(try phone.rowCount("photos") == 0)
        #expect(phone.uploads.entries.isEmpty)
    }

    @Test func storedPhotosCarryNoEXIFButKeepTheOrientation() throws {
        let phone = try APIHarness()
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        let withGPS = insertAfterSOI(photo, exifSegment(orientation: 6, extra: Array("GPS 59.3293N 18.0686E serial=CAM12345".utf8))
                                     + commentSegment("taken at home"))
        #expect(try phone.body([("command", "upload"), ("title", "gps")], file: withGPS) == #"{"successful":1}"#)
        let stored = try #require(readFile("\(phone.uploads.path)/2.jpg"))
        #expect(!contains(stored, Array("GPS 59.3293N".utf8)))
        #expect(!contains(stored, Array("CAM12345".utf8)))
        #expect(!contains(stored, Array("taken at home".utf8)))
        #expect(contains(stored, JPEGMetadataStripper.orientationSegment(6)))
        #expect(jpegSize(stored)! == (640, 480))
        // The image data itself is untouched: everything from the first DQT on is identical.
        let tail = Array(photo[photo.indices.first { photo[$0] == 0xFF && photo[$0 + 1] == 0xDB }!...])
        #expect(Array(stored.suffix(tail.count)) == tail)
    }
}
}

/// An APP1 Exif segment with an Orientation tag and some payload bytes.
func exifSegment(orientation: UInt8, extra: [UInt8]) -> [UInt8] {
    let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00,
                         0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, orientation, 0x00, 0x00, 0x00,
                         0x00, 0x00, 0x00, 0x00]
    let payload = Array("Exif\0\0".utf8) + tiff + extra
    return [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
}

func commentSegment(_ text: String) -> [UInt8] {
    let payload = Array(text.utf8)
    return [0xFF, 0xFE, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
}

func insertAfterSOI(_ jpeg: [UInt8], _ segments: [UInt8]) -> [UInt8] {
    Array(jpeg[..<2]) + segments + Array(jpeg[2...])
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
}
