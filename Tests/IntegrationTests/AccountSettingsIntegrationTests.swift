#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// `change_password`, `export` and `delete_account` against the real
/// MariaDB, the upload folder and session files.
extension DatabaseTests {
@Suite struct AccountSettingsIntegrationTests {
    let photo = makeJPEG(width: 320, height: 240)

    /// An upload that passed its sign-in before its account's deletion ended
    /// stores nothing once the account's row is gone (it would outlive the
    /// account, in the public stream, owned by no one), and publishes no file.
    @Test func aPhotoOrAFollowOfAnAccountDeletedMeanwhileIsNotStored() throws {
        let (phone, _) = try twoPeople()
        let store = MariaDBPhotoStore(database: phone.database)
        try phone.database.execute("DELETE FROM login WHERE IdUser = 2")
        var published = false
        #expect(throws: PhotoStoreError.accountRemoved) {
            _ = try store.add(userID: 2, title: Array("late".utf8), details: nil, secret: nil,
                              publish: { _, _ in published = true }, unpublish: { _ in })
        }
        #expect(!published)
        #expect(try phone.database.query("SELECT COUNT(*) AS n FROM photos WHERE title = 'late'").first?.int64("n") == 0)
        // Nor a follow of it: an edge nobody could take back.
        #expect(try MariaDBFollowStore(database: phone.database).follow(2, by: 5, created: 1) == false)
        #expect(try phone.database.query("SELECT COUNT(*) AS n FROM follows WHERE follower = 5").first?.int64("n") == 0)
        #expect(try MariaDBFollowStore(database: phone.database).follow(1, by: 5, created: 1), "an account still there")
        // The photos left of a deleted account are found without it (the stream joins the account).
        #expect(try store.photoIDs(ofUser: 2, before: .max, limit: 10) == [4, 3])
    }

    /// From a Mastodon client's review: an account without photos showed
    /// `created_at` 1970. Registration keeps its time (migration 016), the
    /// account's page shows it, and the account's removal takes it along.
    @Test func anAccountKeepsWhenItRegisteredUntilItIsRemoved() throws {
        let phone = try APIHarness(hashedPasswords: true)
        let before = Int64(time(nil))
        try phone.send([("command", "register"), ("username", "newcomer"), ("password", "p")])
        let registered = try #require(try phone.database.query("SELECT registered FROM login_registered WHERE IdUser = 1")
            .first?.int64("registered"))
        #expect(registered >= before - 1 && registered <= Int64(time(nil)) + 1)
        let person = try #require(try MariaDBPhotoStore(database: phone.database).person(id: 1))
        #expect(person.registered == registered && person.firstUpload == nil)
        try phone.send([("command", "delete_account"), ("password", "p")])
        #expect(try phone.database.query("SELECT COUNT(*) AS n FROM login_registered").first?.int64("n") == 0)
    }

    /// An account's row deleted outside the API, `login`'s counter lowered
    /// (a one-table restore): the next person registered must not take over
    /// its comments and likes. The id is skipped, for each schema.
    @Test(arguments: ["schema.sql", "original-myisam.sql"])
    func registrationSkipsAnIdAnEarlierAccountsRowsStillName(schema: String) throws {
        let phone = try APIHarness(schema: schema)
        try phone.send([("command", "register"), ("username", "bob"), ("password", "b")])     // 1
        try phone.send([("command", "upload"), ("title", "bob's")], file: photo)              // 2
        phone.cookie = nil
        try phone.send([("command", "register"), ("username", "alice"), ("password", "a")])   // 2
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "alice's remark")])
        try phone.send([("command", "like"), ("IdPhoto", "2")])
        try phone.database.execute("DELETE FROM login WHERE IdUser = 2")
        try phone.database.execute("ALTER TABLE login AUTO_INCREMENT = 2")
        phone.cookie = nil
        #expect(try phone.body([("command", "register"), ("username", "carol"), ("password", "c")]).contains(#""IdUser":"3""#))
        #expect(try !phone.body([("command", "comments"), ("IdPhoto", "2")]).contains("carol"), "not carol's remark")
        #expect(try phone.database.query("SELECT IdUser FROM login ORDER BY IdUser").compactMap { $0.int64("IdUser") } == [1, 3])
        try TestServices.resetTables(phone.database)
    }

    /// Nor a comment, a vote or the notification either would make (a JSON-RPC
    /// batch's later calls, a request in flight: rows owned by no one, found in a review).
    @Test func aCommentVoteOrNotificationOfAnAccountDeletedMeanwhileIsNotStored() throws {
        let (phone, _) = try twoPeople()
        try phone.database.execute("DELETE FROM login WHERE IdUser = 2")
        let before = try phone.database.query(
            "SELECT (SELECT COUNT(*) FROM comments) AS c, (SELECT COUNT(*) FROM votes) AS v, (SELECT COUNT(*) FROM notifications) AS n").first
        #expect(throws: PhotoStoreError.accountRemoved) {
            _ = try MariaDBCommentStore(database: phone.database).addComment(photoID: 2, userID: 2, text: Array("late".utf8), created: 1)
        }
        #expect(throws: PhotoStoreError.accountRemoved) { _ = try MariaDBVoteStore(database: phone.database).setVote(.dislike, photoID: 2, userID: 2) }
        let event = NotificationEvent(kind: .favourite, recipient: 1, actor: 2, photoID: 2)
        #expect(try MariaDBNotificationStore(database: phone.database).record(event, created: 1) == nil)
        let after = try phone.database.query(
            "SELECT (SELECT COUNT(*) FROM comments) AS c, (SELECT COUNT(*) FROM votes) AS v, (SELECT COUNT(*) FROM notifications) AS n").first
        #expect(after?.int64("c") == before?.int64("c") && after?.int64("v") == before?.int64("v") && after?.int64("n") == before?.int64("n"))
        #expect(try phone.database.query("SELECT likes, dislikes, comments FROM photo_counts WHERE IdPhoto = 2").first?.int64("comments") == 1,
                "the counts rolled back with the row")
    }

    /// What such a race left before those guards (an earlier version's
    /// database): `repair --yes` removes the comments, votes and notifications of
    /// accounts that are gone, and counts their photos' likes and comments again.
    @Test func repairRemovesTheReactionsOfDeletedAccounts() throws {
        let (phone, _) = try twoPeople()
        let database = phone.database
        func counts() throws -> [Int64?] {
            let row = try database.query("SELECT likes, dislikes, comments FROM photo_counts WHERE IdPhoto = 2").first
            return [row?.int64("likes"), row?.int64("dislikes"), row?.int64("comments")]
        }
        let before = try counts()
        try database.execute("INSERT INTO votes (IdPhoto, IdUser, vote) VALUES (2, 99, 1)")
        try database.execute("INSERT INTO comments (IdPhoto, IdUser, text, created) VALUES (2, 99, 'left behind', 1)")
        try database.execute("UPDATE photo_counts SET likes = likes + 1, comments = comments + 1 WHERE IdPhoto = 2")
        try database.execute("INSERT INTO notifications (IdPhoto, kind, actor, IdComment, recipient, created) VALUES (2, 'favourite', 99, 0, 1, 1)")
        try database.execute("INSERT INTO login_registered (IdUser, registered) VALUES (99, 1)")
        try database.execute("INSERT INTO votes (IdPhoto, IdUser, vote) VALUES (77, 99, 1)") // its photo gone too: one row, counted once
        #expect(try MariaDBPhotoStore(database: database).orphanedReactions(remove: false) == 5, "counted, not removed")
        #expect(try counts() != before)
        #expect(try MariaDBPhotoStore(database: database).orphanedReactions(remove: true) == 5)
        #expect(try database.query("SELECT IdUser FROM login_registered").count == 2, "the two accounts' own stay")
        #expect(try counts() == before, "counted again")
        #expect(try database.query("SELECT 1 FROM votes WHERE IdUser = 99 UNION ALL SELECT 1 FROM comments WHERE IdUser = 99 "
                                   + "UNION ALL SELECT 1 FROM notifications WHERE actor = 99").isEmpty)
        #expect(try MariaDBPhotoStore(database: database).orphanedReactions(remove: true) == 0, "nothing the second time")
    }

    /// The same on the PHP era's MyISAM tables, where no rollback takes the row back.
    @Test func aPhotoOfAnAccountDeletedMeanwhileIsNotStoredInTheOriginalTables() throws {
        let phone = try APIHarness(schema: "original-myisam.sql")
        try phone.database.execute("INSERT INTO login (username, pass) VALUES ('bob', 'p')")
        let store = MariaDBPhotoStore(database: phone.database)
        #expect(try store.add(userID: 1, title: Array("kept".utf8), details: nil, secret: nil, publish: { _, _ in }, unpublish: { _ in }) > 0)
        try phone.database.execute("DELETE FROM login WHERE IdUser = 1")
        #expect(throws: PhotoStoreError.accountRemoved) {
            _ = try store.add(userID: 1, title: Array("late".utf8), details: nil, secret: nil, publish: { _, _ in }, unpublish: { _ in })
        }
        #expect(try phone.database.query("SELECT title FROM photos").map { String(decoding: $0["title"] ?? [], as: UTF8.self) } == ["kept"])
    }

    /// bob (1) with a photo (2), alice (2) with two (3, 4); each comments and
    /// votes on the other's. The harness is signed in as alice.
    func twoPeople() throws -> (phone: APIHarness, bob: [UInt8]) {
        let phone = try APIHarness(hashedPasswords: true)
        try phone.send([("command", "register"), ("username", "bob"), ("password", "b")])
        try phone.send([("command", "upload"), ("title", "bob's")], file: photo)
        let bob = try #require(phone.cookie)
        phone.cookie = nil
        try phone.send([("command", "register"), ("username", "alice"), ("password", "old")])
        try phone.send([("command", "upload"), ("title", "Sunset é")], file: photo)
        try phone.send([("command", "upload"), ("title", "pier")], file: photo)
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "alice on bob's")])
        try phone.send([("command", "like"), ("IdPhoto", "2")])
        try phone.send([("command", "dislike"), ("IdPhoto", "4")])
        let alice = try #require(phone.cookie)
        phone.cookie = bob
        try phone.send([("command", "comment"), ("IdPhoto", "3"), ("text", "bob on alice's")])
        try phone.send([("command", "like"), ("IdPhoto", "3")])
        try phone.send([("command", "follow"), ("IdUser", "2")])
        phone.cookie = alice
        try phone.send([("command", "follow"), ("IdUser", "1")])
        return (phone, bob)
    }

    func rows(_ phone: APIHarness, _ sql: String) throws -> [String] {
        try phone.database.query(sql).map { row in row.values.map { String(decoding: $0 ?? Array("NULL".utf8), as: UTF8.self) }.joined(separator: ",") }
    }

    @Test func aNewPasswordIsHashedAndEndsTheOtherSessions() throws {
        let (phone, bob) = try twoPeople()
        let current = try #require(phone.cookie)
        let other = try phone.api.services.sessions.create([("IdUser", .string(Array("2".utf8)))], user: 2)
        #expect(try phone.body([("command", "change_password"), ("password", "wrong"), ("new_password", "new")]) == #"{"error":"Wrong password"}"#)
        #expect(try phone.body([("command", "change_password"), ("password", "old"), ("new_password", "new")]) == #"{"successful":1}"#)
        #expect(try rows(phone, "SELECT pass LIKE '$argon2id$%' FROM login WHERE IdUser = 2") == ["1"])
        #expect(try phone.sessions.load(id: current) != nil && phone.sessions.load(id: bob) != nil)
        #expect(try phone.sessions.load(id: Array(other.id.utf8)) == nil)
        phone.cookie = nil
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "new")]).contains(#""IdUser":"2""#))
    }

    /// On a database with the comments and votes of migration 003 alone
    /// (applied by hand while the PHP version still served), the tables of
    /// follows, tokens and media are not there: nothing of the account in
    /// them, and the account goes (it used to be logged out everywhere and
    /// kept, answered "temporarily unavailable" at every try).
    @Test func anAccountGoesFromADatabaseWithoutTheLaterMigrations() throws {
        let phone = try APIHarness(migrated: false)
        try TestServices.runSQLFile(phone.database, "migrations/003-photo-details-comments-votes.sql")
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        try phone.send([("command", "upload"), ("title", "t")], file: photo)
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "mine")])
        let answer = try phone.send([("command", "delete_account"), ("password", "p")])
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"successful":1}"#)
        #expect(try phone.rowCount("login") == 0)
        #expect(try phone.rowCount("photos") == 0)
        #expect(try phone.rowCount("comments") == 0)
    }

    /// Without migration 003 a photo cannot be removed (its counts' row is
    /// locked first): the deletion fails whole, the account and its photos
    /// stay, rather than the account going and its photos staying public.
    @Test func withoutMigration003AnAccountIsNotDeletedWithoutItsPhotos() throws {
        let phone = try APIHarness(migrated: false)
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        try phone.send([("command", "upload"), ("title", "t")], file: photo)
        let answer = try phone.send([("command", "delete_account"), ("password", "p")])
        #expect(String(decoding: answer.body, as: UTF8.self) != #"{"successful":1}"#)
        #expect(try phone.rowCount("login") == 1 && phone.rowCount("photos") == 1)
    }

    @Test func theAccountsRowsAndFilesGoAndTheOthersCountsFollow() throws {
        let (phone, bob) = try twoPeople()
        #expect(try rows(phone, "SELECT IdPhoto FROM photo_secrets ORDER BY IdPhoto") == ["2", "3", "4"])
        #expect(try phone.body([("command", "delete_account"), ("password", "wrong")]) == #"{"error":"Wrong password"}"#)
        #expect(try phone.rowCount("photos") == 3)
        let answer = try phone.send([("command", "delete_account"), ("password", "old")])
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"successful":1}"#)
        #expect(phone.cookie == nil)
        #expect(try rows(phone, "SELECT IdUser, username FROM login") == ["1,bob"])
        #expect(try rows(phone, "SELECT IdPhoto FROM photos") == ["2"])
        #expect(try rows(phone, "SELECT IdPhoto, IdUser FROM votes") == [])
        #expect(try rows(phone, "SELECT IdPhoto, IdUser FROM comments") == [])
        #expect(try rows(phone, "SELECT IdPhoto, likes, dislikes, comments FROM photo_counts") == ["2,0,0,0"], "bob's counts follow")
        #expect(try rows(phone, "SELECT IdPhoto FROM photo_details") == ["2"])
        #expect(try rows(phone, "SELECT IdPhoto FROM photo_secrets") == ["2"])
        #expect(try rows(phone, "SELECT DISTINCT IdPhoto FROM photo_words") == ["2"])
        #expect(try rows(phone, "SELECT follower, followee FROM follows") == [])
        #expect(try rows(phone, "SELECT recipient, actor FROM notifications") == [])
        #expect(phone.uploads.entries == ["2-thumb.jpg", "2.jpg", "photos"])
        #expect(try ScratchDirectory.names(in: "\(phone.uploads.path)/photos/000/000").allSatisfy { $0.hasPrefix("2_") },
                "every file of alice's photos in the tree went (as `delete` removes them)")
        #expect(try phone.sessions.load(id: bob) != nil, "bob's session stays")
        #expect(phone.sessionFiles.entries.filter { $0.hasPrefix("sess_") } == ["sess_" + String(decoding: bob, as: UTF8.self)])
    }

    @Test func theExportHoldsTheOriginalsAsStored() throws {
        let (phone, _) = try twoPeople()
        let answer = try phone.send([("command", "export")])
        let file = try #require(answer.file)
        var zip: [UInt8] = []
        #expect(file.send { zip += $0; return true })
        let path = phone.uploads.path + "/../export-\(getpid()).zip"
        defer { unlink(path) }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        _ = zip.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        #expect(phone.uploads.entries.allSatisfy { !$0.hasPrefix(".spool") }, "the spool file is gone once answered")
        #expect(try SpawnedProgram(["python3", "-c", """
            import json, sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            assert z.namelist() == ["photos/4.jpg", "photos/3.jpg", "ireporter.json"], z.namelist()
            assert z.read("photos/3.jpg") == open(sys.argv[2] + "/3.jpg", "rb").read()
            d = json.loads(z.read("ireporter.json"))
            assert [p["title"] for p in d["photos"]] == ["pier", "Sunset é"], d
            assert all(p["created"].isdigit() for p in d["photos"]), d
            assert [(c["IdPhoto"], c["text"]) for c in d["comments"]] == [("2", "alice on bob's")], d
            assert d["votes"] == [{"IdPhoto": "2", "vote": "1"}, {"IdPhoto": "4", "vote": "-1"}], d
            """, path, phone.uploads.path]).exitStatus() == 0)
    }
}
}
