#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// Every command and error path of the API against the real MariaDB.
extension DatabaseTests {
@Suite struct APIIntegrationTests {
    static let alicePass = "18c69224371c58c547b68bfa6d28dc8aeff006e4"
    let photo = makeJPEG(width: 640, height: 480)

    @Test func theAppsFlow() throws {
        let phone = try APIHarness()
        #expect(try phone.body([("command", "register"), ("username", "alice"), ("password", Self.alicePass)])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        let registeredCookie = try #require(phone.cookie)
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", Self.alicePass)])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        #expect(phone.cookie != registeredCookie, "a new session id at every login")
        #expect(phone.sessionFiles.entries == ["ireporter-sessions-1", "sess_" + String(decoding: phone.cookie!, as: UTF8.self)],
                "the old session is gone (the index lists the user's sessions)")
        #expect(try phone.body([("command", "upload"), ("title", "Sunset at the pier")], file: photo) == #"{"successful":1}"#)
        #expect(phone.uploads.entries == ["2-thumb.jpg", "2.jpg", "photos"], "first photo is IdPhoto 2, no spool file left")
        let secret = try #require(try MariaDBPhotoStore(database: phone.database).secret(of: 2))
        #expect(try ScratchDirectory.names(in: "\(phone.uploads.path)/photos/000/000") == ["2_\(secret)_o.jpg"], "and in the tree")
        let stored = try #require(readFile("\(phone.uploads.path)/2.jpg"))
        #expect(jpegSize(stored)! == (640, 480))
        #expect(jpegSize(try #require(readFile("\(phone.uploads.path)/2-thumb.jpg")))! == (180, 180))
        let one = #"{"result":[{"IdPhoto":"2","title":"Sunset at the pier","IdUser":"1","username":"alice"}]}"#
        #expect(try phone.body([("command", "stream")]) == one)
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "2")]) == one)
        let logout = try phone.send([("command", "logout")])
        #expect(logout.body.isEmpty)
        #expect(logout.setCookie == ["PHPSESSID=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly; SameSite=Lax"])
        #expect(phone.sessionFiles.entries == ["ireporter-sessions-1"])
        #expect(try phone.body([("command", "upload"), ("title", "again")], file: photo) == #"{"error":"Authorization required"}"#)
        #expect(phone.uploads.entries == ["2-thumb.jpg", "2.jpg", "photos"])
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", Self.alicePass)])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        #expect(try phone.body([("command", "upload"), ("title", "again")], file: photo) == #"{"successful":1}"#)
        #expect(try phone.rowCount("photos") == 2)
    }

    /// With `db_charset = utf8mb4` (`ireporter check`'s advice where a PHP
    /// version connected so) MariaDB converts text into the latin1 columns
    /// and, strict, refuses an emoji: said so, not "try again" for ever.
    @Test func textTheColumnsCannotHoldIsRefusedClearly() throws {
        let phone = try APIHarness()
        var settings = try TestServices.settings()
        settings.charset = "utf8mb4"
        let converting = DatabaseConnection(settings: settings)
        try converting.command("SET SESSION sql_mode = 'STRICT_ALL_TABLES'")
        let worker = phone.anotherWorker(database: converting)
        #expect(try phone.body([("command", "register"), ("username", "alice"), ("password", "p")], through: worker)
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        #expect(try phone.body([("command", "upload"), ("title", "Café")], file: photo, through: worker) == #"{"successful":1}"#)
        #expect(try phone.body([("command", "upload"), ("title", "Coffee ☕")], file: photo, through: worker)
                == #"{"error":"The text has characters this server cannot store"}"#)
        let comment = try phone.body([("command", "comment"), ("IdPhoto", "2"), ("text", "☕")], through: worker)
        #expect(comment == #"{"error":"The text has characters this server cannot store"}"#, "\(comment)")
        #expect(try phone.rowCount("photos") == 1)
        #expect(phone.uploads.entries.filter { $0.hasSuffix(".jpg") } == ["2-thumb.jpg", "2.jpg"], "the refused upload left nothing")
    }

    @Test func registrationRules() throws {
        let phone = try APIHarness()
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        #expect(try phone.body([("command", "register"), ("username", "alice"), ("password", "y")]) == #"{"error":"Username already exists"}"#)
        #expect(try phone.body([("command", "register"), ("username", "ALICE"), ("password", "y")]) == #"{"error":"Username already exists"}"#)
        // (the column ignores trailing spaces; a new name may not have them at all)
        #expect(try phone.body([("command", "register"), ("username", "ALICE "), ("password", "y")])
                == #"{"error":"Usernames cannot begin or end with a space"}"#)
        // Every stored name is read back for its look-alike skeleton: Cyrillic а, full-width.
        for lookalike in ["\u{430}lice", "ａｌｉｃｅ"] {
            #expect(try phone.body([("command", "register"), ("username", lookalike), ("password", "y")])
                    == #"{"error":"Username is too similar to an existing one"}"#)
        }
        // PHP decoded every SQL argument once more: `c+d%21` is the account `c d!`.
        #expect(try phone.body([("command", "register"), ("username", "c+d%21"), ("password", "p+w")])
                == #"{"result":[{"IdUser":"2","username":"c d!"}]}"#)
        #expect(try phone.body([("command", "login"), ("username", "c d!"), ("password", "p w")])
                == #"{"result":[{"IdUser":"2","username":"c d!"}]}"#)
        // Over the varchar(45) columns: refused, nothing inserted (PHP inserted a truncated row).
        #expect(try phone.body([("command", "register"), ("username", String(repeating: "u", count: 46)), ("password", "pw")])
                == #"{"error":"Registration failed"}"#)
        #expect(try phone.body([("command", "register"), ("username", "v"), ("password", String(repeating: "p", count: 46))])
                == #"{"error":"Registration failed"}"#)
        #expect(try phone.body([("command", "register"), ("username", String(repeating: "u", count: 45)), ("password", "pw")])
                == #"{"result":[{"IdUser":"3","username":"\#(String(repeating: "u", count: 45))"}]}"#)
        // No password field: an account with an empty password, as the original did.
        #expect(try phone.body([("command", "register"), ("username", "bob")]) == #"{"result":[{"IdUser":"4","username":"bob"}]}"#)
        #expect(try phone.rowCount("login") == 4)
    }

    @Test func loginRules() throws {
        let phone = try APIHarness()
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", Self.alicePass)])
        phone.cookie = nil
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "wrong")]) == #"{"error":"Authorization failed"}"#)
        #expect(phone.cookie == nil, "no session for a failed login")
        #expect(try phone.body([("command", "login"), ("username", "alice")]) == #"{"error":"Authorization failed"}"#)
        // latin1_swedish_ci: case and trailing spaces do not matter; the stored name comes back.
        #expect(try phone.body([("command", "login"), ("username", "Alice "), ("password", Self.alicePass.uppercased())])
                == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        #expect(try phone.body([("command", "login"), ("username", "' OR '1'='1"), ("password", "' OR '1'='1")])
                == #"{"error":"Authorization failed"}"#)
    }

    @Test func uploadsThatAreRefusedLeaveNothingBehind() throws {
        var policy = APIHarness.fastHashing
        policy.maxImagePixels = 1_000_000
        let phone = try APIHarness(policy: policy)
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 64)
        let notJPEG = #"{"error":"The photo is not a valid JPEG image"}"#
        #expect(try phone.body([("command", "upload"), ("title", "png")], file: png) == notJPEG)
        #expect(try phone.body([("command", "upload"), ("title", "empty")], file: []) == notJPEG)
        #expect(try phone.body([("command", "upload"), ("title", "text")], file: Array("hello".utf8)) == notJPEG)
        #expect(try phone.body([("command", "upload"), ("title", "cut")], file: Array(photo.prefix(photo.count / 2))) == notJPEG)
        #expect(try phone.body([("command", "upload"), ("title", "big")], file: makeJPEG(width: 1200, height: 1000))
                == #"{"error":"The photo has too many pixels (the limit is 1 megapixels)"}"#)
        #expect(try phone.body([("command", "upload"), ("title", "no file")]) == #"{"error":"Upload malfunction"}"#)
        #expect(try phone.rowCount("photos") == 0)
        #expect(phone.uploads.entries.isEmpty)
    }

    @Test func aFailedFileWriteRemovesTheRow() throws {
        let phone = try APIHarness()
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        // The photo's final name is taken by a directory: the rename fails after the INSERT.
        #expect(mkdir("\(phone.uploads.path)/2.jpg", 0o755) == 0)
        #expect(try phone.body([("command", "upload"), ("title", "t")], file: photo) == #"{"error":"Upload on server problem"}"#)
        #expect(try phone.rowCount("photos") == 0)
        #expect(phone.uploads.entries == ["2.jpg", "photos"], "no thumbnail, no spool file left")
        #expect(try ScratchDirectory.names(in: "\(phone.uploads.path)/photos/000/000").isEmpty, "nor the photo in the tree")

        let nowhere = try APIHarness(uploadDirectory: "/nonexistent-upload-dir")
        _ = try nowhere.send([("command", "register"), ("username", "alice"), ("password", "x")])
        #expect(try nowhere.body([("command", "upload"), ("title", "t")], file: photo) == #"{"error":"Upload on server problem"}"#)
        #expect(try nowhere.rowCount("photos") == 0)
    }

    @Test func titlesAreStoredAsSent() throws {
        let phone = try APIHarness()
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        for title in ["Café ☕ 🌅", "It's \"cheese\" \\o/ '); DROP TABLE photos;--", "a+b%41",
                      String(repeating: "T", count: 120), String(repeating: "x", count: 99) + "é", ""] {
            #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
        }
        #expect(try phone.body([("command", "stream")]) == """
            {"result":[{"IdPhoto":"7","title":"","IdUser":"1","username":"alice"},\
            {"IdPhoto":"6","title":"\(String(repeating: "x", count: 99))","IdUser":"1","username":"alice"},\
            {"IdPhoto":"5","title":"\(String(repeating: "T", count: 100))","IdUser":"1","username":"alice"},\
            {"IdPhoto":"4","title":"a+b%41","IdUser":"1","username":"alice"},\
            {"IdPhoto":"3","title":"It's \\"cheese\\" \\\\o\\/ '); DROP TABLE photos;--","IdUser":"1","username":"alice"},\
            {"IdPhoto":"2","title":"Caf\\u00e9 \\u2615 \\ud83c\\udf05","IdUser":"1","username":"alice"}]}
            """)
    }

    @Test func streamSelection() throws {
        let phone = try APIHarness()
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        #expect(try phone.body([("command", "stream")]) == #"{"result":[]}"#)
        // 55 rows straight into the table (as the PHP version may have left them),
        // one with a title cut inside a UTF-8 character.
        for index in 0..<55 {
            try phone.database.execute("INSERT INTO photos (IdUser, title) VALUES (1, ?)", [.bytes(Array("p\(index)".utf8))])
        }
        try phone.database.execute("INSERT INTO photos (IdUser, title) VALUES (1, ?)", [.bytes([0x78, 0xC3])])
        let stream = try phone.body([("command", "stream")])
        #expect(stream.hasPrefix(#"{"result":[{"IdPhoto":"57","title":null,"IdUser":"1","username":"alice"},{"IdPhoto":"56","title":"p54""#))
        #expect(stream.split(separator: "IdPhoto").count - 1 == 50)
        #expect(stream.hasSuffix(#"{"IdPhoto":"8","title":"p6","IdUser":"1","username":"alice"}]}"#))
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "3")]) == #"{"result":[{"IdPhoto":"3","title":"p1","IdUser":"1","username":"alice"}]}"#)
        #expect(try phone.body([("command", "stream"), ("IdPhoto", " 3abc")]) == #"{"result":[{"IdPhoto":"3","title":"p1","IdUser":"1","username":"alice"}]}"#)
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "999")]) == #"{"result":[]}"#)
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "99999999999999999999")]) == #"{"result":[]}"#)
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "-1")]) == #"{"result":[]}"#)
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "abc")]) == stream)
    }

    @Test func theStreamCacheKeepsReadYourWrites() throws {
        var policy = APIHarness.fastHashing
        policy.streamCacheMillis = 300
        let phone = try APIHarness(policy: policy)
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        #expect(try phone.body([("command", "stream")]) == #"{"result":[]}"#)
        // Another worker of the same server: its own cache, the shared generation.
        let otherWorker = phone.anotherWorker(policy: policy,
                                              database: DatabaseConnection(settings: try TestServices.settings()))
        let thisWorker = phone.anotherWorker(policy: policy)
        func stream(_ api: IReporterAPI) -> String {
            var form = FormData()
            form.setField(Array("command".utf8), Array("stream".utf8))
            return String(decoding: api.handle(APIRequest(parameters: form)).body, as: UTF8.self)
        }
        #expect(stream(otherWorker) == #"{"result":[]}"#)
        var form = FormData()
        form.setField(Array("command".utf8), Array("upload".utf8))
        form.setField(Array("title".utf8), Array("fresh".utf8))
        let spool = phone.uploads.write(".spool-test01", photo)
        form.addFile(Array("file".utf8), UploadedFile(filename: Array("photo.jpg".utf8), contentType: [], spoolPath: spool, size: photo.count))
        let upload = APIRequest(parameters: form, sessionCookie: phone.cookie)
        #expect(String(decoding: thisWorker.handle(upload).body, as: UTF8.self) == #"{"successful":1}"#)
        let fresh = #"{"result":[{"IdPhoto":"2","title":"fresh","IdUser":"1","username":"alice"}]}"#
        #expect(stream(otherWorker) == fresh, "an upload through one worker is in the next stream of another")
        // A row written behind the server's back shows once the cache is older than its limit.
        try phone.database.execute("UPDATE photos SET title = 'changed elsewhere'")
        phone.clock.advance(byMillis: 299)
        #expect(stream(otherWorker) == fresh)
        phone.clock.advance(byMillis: 1)
        #expect(stream(otherWorker) == #"{"result":[{"IdPhoto":"2","title":"changed elsewhere","IdUser":"1","username":"alice"}]}"#)
    }

    @Test func unknownAndMissingCommandsAnswerNothing() throws {
        let phone = try APIHarness()
        #expect(try phone.send([("command", "purge")]) == .empty)
        #expect(try phone.send([]) == .empty)
        #expect(try phone.send([("command", "LOGIN")]) == .empty)
        #expect(try phone.send([("command", "logout")]) == .empty, "logout without a session: nothing to clear")
    }

    @Test func aSessionWrittenByThePHPVersionCanUpload() throws {
        let phone = try APIHarness()
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        _ = phone.sessionFiles.write("sess_c1i1l468b9reah059gijqe41q8", Array(#"IdUser|s:1:"1";"#.utf8))
        phone.cookie = Array("c1i1l468b9reah059gijqe41q8".utf8)
        #expect(try phone.body([("command", "upload"), ("title", "from php")], file: photo) == #"{"successful":1}"#)
        // A well-formed id the server never issued is not adopted.
        phone.cookie = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        #expect(try phone.body([("command", "upload"), ("title", "forged")], file: photo) == #"{"error":"Authorization required"}"#)
    }

    @Test func theOriginalMyISAMDatabaseWorksToo() throws {
        let phone = try APIHarness(schema: "original-myisam.sql")
        let engines = try phone.database.query("""
            SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('login', 'photos') \
            ORDER BY TABLE_NAME
            """)
        #expect(engines.map { String(decoding: $0[0]!, as: UTF8.self) } == ["MyISAM", "MyISAM"])
        #expect(try phone.body([("command", "register"), ("username", "alice"), ("password", "x")]) == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
        #expect(try phone.body([("command", "upload"), ("title", "t")], file: photo) == #"{"successful":1}"#)
        #expect(try phone.body([("command", "stream")]) == #"{"result":[{"IdPhoto":"2","title":"t","IdUser":"1","username":"alice"}]}"#)
        try TestServices.resetTables(phone.database)
    }

    /// On the PHP version's schema an upload does not ask MariaDB, at every
    /// upload, for the tables of migrations 003, 005 and 006; once they are
    /// applied under the running server, the uploads a second later use them.
    @Test func uploadsSkipTheMissingTablesAndUseThemOnceMigrated() throws {
        let phone = try APIHarness(schema: "original-myisam.sql", migrated: false)
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        /// This connection's statements prepared and executed so far (the
        /// query's own execution counted).
        func statements() throws -> (prepared: Int, executed: Int) {
            let rows = try phone.database.query("""
                SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS \
                WHERE VARIABLE_NAME IN ('COM_STMT_PREPARE', 'COM_STMT_EXECUTE') ORDER BY VARIABLE_NAME
                """)
            let values = rows.map { Int(String(decoding: $0["VARIABLE_VALUE"]!, as: UTF8.self))! }
            return (values[1], values[0])
        }
        func upload(_ title: String) throws -> Int64 {
            #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
            return try #require(try phone.database.query("SELECT MAX(IdPhoto) AS id FROM photos")[0].int64("id"))
        }
        _ = try upload("first")
        _ = try statements()
        let before = try statements()
        #expect(try phone.body([("command", "upload"), ("title", "second")], file: photo) == #"{"successful":1}"#)
        let after = try statements()
        #expect(after.prepared == before.prepared, "none refused again")
        #expect(after.executed - before.executed == 3, "the upload's INSERT, its account's check, and this query")

        for migration in ["003-photo-details-comments-votes.sql", "005-photo-words.sql", "006-photo-secrets.sql"] {
            try TestServices.runSQLFile(phone.database, "migrations/\(migration)")
        }
        func kept(_ id: Int64) throws -> [Int] {
            try ["photo_details", "photo_secrets", "photo_words"].map {
                try phone.database.query("SELECT 1 FROM \($0) WHERE IdPhoto = ?", [.int(id)]).count
            }
        }
        #expect(try kept(try upload("within the second")) == [0, 0, 0], "the tables are still taken as missing")
        phone.clock.advance(byMillis: DatabaseConnection.missingTableRecheckMillis)
        #expect(try kept(try upload("sunset harbour")) == [1, 1, 3], "its details, its secret, its words: sunset, harbour, alice")
        try TestServices.resetTables(phone.database)
    }

    /// A photo stored without a secret (no migration 006) gets its 2012
    /// names, as a PHP-era photo has, even with `legacy_photo_urls = off`:
    /// in the tree alone, under a secret no row holds, no URL would find it.
    @Test func withoutMigration006APhotoKeepsItsOldNames() throws {
        let folder = ScratchDirectory("upload-tree-only")
        let files = UploadFolder(directory: folder.path, legacyNames: false)
        let phone = try APIHarness(schema: "original-myisam.sql", migrated: false, photoFiles: files)
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        #expect(try phone.body([("command", "upload"), ("title", "no secret")], file: photo) == #"{"successful":1}"#)
        #expect(access(files.photoPath(id: 2), R_OK) == 0 && access(files.thumbnailPath(id: 2), R_OK) == 0)
        #expect(files.tree.files(of: 2).isEmpty, "nothing under a secret that is not stored")

        try TestServices.runSQLFile(phone.database, "migrations/006-photo-secrets.sql")
        phone.clock.advance(byMillis: DatabaseConnection.missingTableRecheckMillis)
        #expect(try phone.body([("command", "upload"), ("title", "secret")], file: photo) == #"{"successful":1}"#)
        let secret = try #require(try MariaDBPhotoStore(database: phone.database).secret(of: 3))
        #expect(files.tree.files(of: 3) == [files.tree.path(id: 3, secret: secret, size: .original).split(separator: "/").last.map(String.init)!])
        #expect(access(files.photoPath(id: 3), F_OK) != 0, "with its secret, in the tree alone")
        try TestServices.resetTables(phone.database)
    }

    @Test func reconnectsWhenTheConnectionWasKilled() throws {
        let phone = try APIHarness()
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
        let id = try phone.database.query("SELECT CONNECTION_ID()")[0][0]!
        let other = DatabaseConnection(settings: try TestServices.settings())
        try other.command("KILL CONNECTION \(String(decoding: id, as: UTF8.self))")
        #expect(try phone.body([("command", "stream")]) == #"{"result":[]}"#)
        try other.command("KILL CONNECTION \(String(decoding: try phone.database.query("SELECT CONNECTION_ID()")[0][0]!, as: UTF8.self))")
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "x")]) == #"{"result":[{"IdUser":"1","username":"alice"}]}"#)
    }

    @Test func theDatabaseCanComeFromAClientOptionFile() throws {
        let url = try TestServices.settings()
        let directory = ScratchDirectory("optionfile")
        let file = directory.write("ireporter.cnf", Array("""
            [client]
            user = \(url.user)
            password = \(url.password)
            \(url.socket.map { "socket = \($0)" } ?? "host = \(url.host)\nport = \(url.port)")
            [ireporter]
            database = \(url.database)

            """.utf8))
        let configuration = try Configuration.load(arguments: [], environment: ["IREPORTER_DB_OPTION_FILE": file])
        let database = DatabaseConnection(settings: configuration.database)
        #expect(try database.query("SELECT DATABASE(), CURRENT_USER()")[0].values.map { String(decoding: $0!, as: UTF8.self) }
                == [url.database, "\(url.user)@localhost"])
    }

    @Test func anUnreachableDatabaseIsAClearError() throws {
        var settings = try TestServices.settings()
        settings.socket = "/nonexistent.sock"
        settings.host = "localhost"
        let sessions = ScratchDirectory("sessions")
        let uploads = ScratchDirectory("upload")
        let api = IReporterAPI(services: APIHarness.services(
            database: DatabaseConnection(settings: settings), sessions: SessionFiles(directory: sessions.path, idleTimeout: 60),
            counters: SharedMemoryCounters(capacity: 64), uploadDirectory: uploads.path, policy: AppServices.Policy()))
        for command in ["stream", "login", "register"] {
            var form = FormData()
            form.setField(Array("command".utf8), Array(command.utf8))
            #expect(String(decoding: api.handle(APIRequest(parameters: form)).body, as: UTF8.self)
                    == #"{"error":"The service is temporarily unavailable, please try again"}"#)
        }
    }

    @Test func theStreamQueryWalksThePrimaryKey() throws {
        let phone = try APIHarness()
        // `newest`: the page query with the widest cursor (its plan pinned, ReactionIntegrationTests).
        let plan = try phone.database.query("""
            EXPLAIN SELECT STRAIGHT_JOIN p.IdPhoto, title, l.IdUser, username FROM photos p JOIN login l ON (l.IdUser = p.IdUser) \
            WHERE p.IdPhoto > -9223372036854775808 AND p.IdPhoto < 9223372036854775807 ORDER BY p.IdPhoto DESC LIMIT 50
            """)
        let extras = plan.compactMap { $0["Extra"].map { String(decoding: $0, as: UTF8.self) } }
        #expect(!extras.contains { $0.contains("filesort") || $0.contains("temporary") }, "plan: \(extras)")
    }
}
}
