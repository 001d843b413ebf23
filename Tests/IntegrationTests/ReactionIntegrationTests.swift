#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import IReporterKit
import TestSupport

extension DatabaseTests {
    /// The commands of issue 15 against the real MariaDB: on InnoDB and
    /// beside the original MyISAM tables, before and after migration 003;
    /// the page queries' plans; a deletion cut short, and its repair.
    @Suite struct ReactionIntegrationTests {
        let photo = makeJPEG(width: 64, height: 48)

        /// bob (1) and alice (2); alice uploads one photo (2), bob likes and comments on it.
        func flow(_ phone: APIHarness) throws {
            try phone.send([("command", "register"), ("username", "bob"), ("password", "p")])
            try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
            #expect(try phone.body([("command", "upload"), ("title", "mine")], file: photo) == #"{"successful":1}"#)
            try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
            #expect(try phone.body([("command", "like"), ("IdPhoto", "2")])
                    == #"{"result":[{"IdPhoto":"2","likes":"1","dislikes":"0","comments":"0","myvote":"1"}]}"#)
            #expect(try phone.body([("command", "like"), ("IdPhoto", "2")]).contains(#""likes":"1""#), "idempotent")
            let comment = try phone.body([("command", "comment"), ("IdPhoto", "2"), ("text", #"<b>"wow"</b> é"#)])
            #expect(comment.hasPrefix(#"{"result":[{"IdComment":"1","IdPhoto":"2","IdUser":"1","username":"bob","text":"<b>\"wow\"<\/b> \u00e9","created":""#))
            let created = try #require(phone.database.query("SELECT created FROM photo_details WHERE IdPhoto = 2").first?.int64("created"))
            #expect(try phone.body([("command", "stream"), ("extras", "likes,dislikes,comments,myvote,created,width,height")]) == """
                {"result":[{"IdPhoto":"2","title":"mine","IdUser":"2","username":"alice","likes":"1","dislikes":"0",\
                "comments":"1","myvote":"1","created":"\(created)","width":"64","height":"48"}]}
                """)
            #expect(try phone.body([("command", "liked"), ("extras", "likes")])
                    == #"{"result":[{"IdPhoto":"2","title":"mine","IdUser":"2","username":"alice","likes":"1"}]}"#)
            #expect(try phone.body([("command", "delete"), ("IdPhoto", "2")]) == #"{"error":"You can only delete your own photos"}"#)
            #expect(try phone.body([("command", "like"), ("IdPhoto", "3")]) == #"{"error":"No such photo"}"#)
            #expect(try phone.body([("command", "like"), ("IdPhoto", "99999999999")]) == #"{"error":"No such photo"}"#,
                    "beyond int(11): no row, nothing clamped")
            #expect(try phone.rowCount("photo_counts") == 1, "a refused vote left no counts row")
            try phone.send([("command", "login"), ("username", "alice"), ("password", "p")])
            #expect(try phone.body([("command", "delete"), ("IdPhoto", "2")]) == #"{"successful":1}"#)
            for table in ["photos", "votes", "comments", "photo_details", "photo_counts", "photo_words", "photo_secrets"] {
                #expect(try phone.rowCount(table) == 0, "\(table)")
            }
            #expect(phone.uploads.entries == ["photos"], "the files went with the row")
            #expect(try ScratchDirectory.names(in: "\(phone.uploads.path)/photos/000/000").isEmpty, "every size too")
            #expect(try phone.body([("command", "stream")]) == #"{"result":[]}"#)
        }

        @Test func onInnoDB() throws {
            try flow(try APIHarness())
        }

        @Test func besideTheOriginalMyISAMTables() throws {
            let phone = try APIHarness(schema: "original-myisam.sql")
            let engines = try phone.database.query("""
                SELECT TABLE_NAME, ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()
                """).map { "\(String(decoding: $0[0]!, as: UTF8.self))=\(String(decoding: $0[1]!, as: UTF8.self))" }.sorted()
            // The original two as they were; every migration's table InnoDB beside them.
            #expect(engines.filter { !$0.hasSuffix("=InnoDB") } == ["login=MyISAM", "photos=MyISAM"])
            #expect(Set(["comments", "photo_counts", "photo_details", "photo_secrets", "photo_words", "photo_words_backfill",
                         "votes", "follows", "notifications"].map { $0 + "=InnoDB" }).isSubset(of: engines), "\(engines)")
            try flow(phone)
            try TestServices.resetTables(phone.database)
        }

        @Test func withoutMigration003TheOriginalCommandsWork() throws {
            let phone = try APIHarness(migrated: false)
            try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
            #expect(try phone.body([("command", "upload"), ("title", "t")], file: photo) == #"{"successful":1}"#, "kept without details")
            #expect(try phone.body([("command", "stream"), ("since", "1")])
                    == #"{"result":[{"IdPhoto":"2","title":"t","IdUser":"1","username":"alice"}]}"#)
            #expect(try phone.body([("command", "like"), ("IdPhoto", "2")])
                    == #"{"error":"The service is temporarily unavailable, please try again"}"#)
            try TestServices.resetTables(phone.database)
        }

        /// `liked` reads migration 013's index, never every vote: refused
        /// without it; a vote whose photo is gone (a MyISAM deletion cut
        /// short) takes no place in a page.
        @Test func likedNeedsMigration013AndSkipsVotesOfPhotosGone() throws {
            let phone = try APIHarness()
            try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
            for title in ["a", "b", "c"] {
                #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
            }
            for id in ["2", "3", "4"] { try phone.send([("command", "like"), ("IdPhoto", id)]) }
            try phone.database.execute("DELETE FROM photos WHERE IdPhoto = 3")
            #expect(try phone.body([("command", "liked"), ("count", "2")]).contains(#""IdPhoto":"2""#), "the gone photo's vote skipped")
            try phone.database.execute("DROP INDEX \(MariaDBVoteStore.userIndex) ON votes")
            #expect(try phone.body([("command", "liked")])
                    == #"{"error":"Liked photos are listed once the database is migrated (ireporter migrate)"}"#)
            try TestServices.resetTables(phone.database)
        }

        /// `flickr.people.getInfo`'s account: its name, photo count and first
        /// kept upload time (and the last: the Mastodon account's `last_status_at`).
        @Test func aPersonWithTheirPhotosCountAndFirstUpload() throws {
            for migrated in [true, false] {
                let phone = try APIHarness(migrated: migrated)
                try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
                try phone.send([("command", "register"), ("username", "bob"), ("password", "p")])
                let store = MariaDBPhotoStore(database: phone.database)
                for created in [3000, 2000] as [Int64] {
                    _ = try store.add(userID: 1, title: Array("t".utf8), details: PhotoDetails(created: created, width: 1, height: 1),
                                      publish: { _ in }, unpublish: { _ in })
                }
                _ = try store.add(userID: 2, title: Array("t".utf8), publish: { _ in }, unpublish: { _ in })
                // When they registered: kept by migration 016 (checked in AccountSettingsIntegrationTests).
                func person(_ id: Int64) throws -> PersonRecord? {
                    var found = try store.person(id: id)
                    #expect((found?.registered != nil) == migrated)
                    found?.registered = nil
                    return found
                }
                #expect(try person(1) == PersonRecord(id: 1, username: Array("alice".utf8), photoCount: 2,
                                                      firstUpload: migrated ? 2000 : nil, lastUpload: migrated ? 3000 : nil),
                        "migrated: \(migrated)")
                #expect(try person(2) == PersonRecord(id: 2, username: Array("bob".utf8), photoCount: 1, firstUpload: nil),
                        "a photo without its details gives no first date")
                #expect(try store.person(id: 3) == nil)
                try TestServices.resetTables(phone.database)
            }
        }

        @Test func countsStayExactUnderConcurrentVotes() throws {
            let phone = try APIHarness()
            try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
            try phone.send([("command", "upload"), ("title", "t")], file: photo)
            let settings = try TestServices.settings()
            let voters = 8
            for voter in 0..<voters {  // a vote needs its account
                try phone.database.execute("INSERT INTO login (IdUser, username, pass) VALUES (?, ?, 'p')",
                                           [.int(Int64(100 + voter)), .text("voter\(voter)")])
            }
            // Each voter its own connection, as each worker has.
            DispatchQueue.concurrentPerform(iterations: voters) { voter in
                let votes = MariaDBVoteStore(database: DatabaseConnection(settings: settings))
                for round in 0..<20 {
                    _ = try? votes.setVote(round % 3 == 0 ? .dislike : round % 3 == 1 ? .like : nil, photoID: 2,
                                           userID: Int64(100 + voter))
                }
                _ = try? votes.setVote(.like, photoID: 2, userID: Int64(100 + voter))
            }
            let counts = try #require(phone.database.query("SELECT likes, dislikes FROM photo_counts WHERE IdPhoto = 2").first)
            #expect(counts.int64("likes") == Int64(voters) && counts.int64("dislikes") == 0)
            #expect(try phone.rowCount("votes") == voters)
        }

        @Test func aVoteIsInTheVotersNextStreamOnEveryWorker() throws {
            var policy = APIHarness.fastHashing
            policy.streamCacheMillis = 60_000 // only the shared generation tells a worker its copy is old
            let phone = try APIHarness(policy: policy)
            try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
            for title in ["a", "b"] { try phone.send([("command", "upload"), ("title", title)], file: photo) }
            try phone.send([("command", "register"), ("username", "bob"), ("password", "p")])
            let workers = [phone.api, phone.anotherWorker(policy: policy, database: DatabaseConnection(settings: try TestServices.settings()))]
            func votes(_ worker: IReporterAPI) throws -> [String] {
                let body = try phone.body([("command", "stream"), ("extras", "likes,myvote")], through: worker)
                return body.split(separator: "\"myvote\":\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
            }
            for worker in workers { #expect(try votes(worker) == ["0", "0"]) }
            try phone.send([("command", "like"), ("IdPhoto", "3")], through: workers[0])
            for worker in workers { #expect(try votes(worker) == ["1", "0"], "at once, on either worker") }
            try phone.send([("command", "dislike"), ("IdPhoto", "3")], through: workers[1])
            try phone.send([("command", "like"), ("IdPhoto", "2")], through: workers[1])
            for worker in workers { #expect(try votes(worker) == ["-1", "1"]) }
            try phone.send([("command", "login"), ("username", "alice"), ("password", "p")])
            for worker in workers { #expect(try votes(worker) == ["0", "0"], "alice's votes, not bob's") }
        }

        @Test func aBatchReadsItsPhotosInOneQueryAndAnswersAsAlone() throws {
            let phone = try APIHarness()
            try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
            for title in ["a", "b", "c"] { try phone.send([("command", "upload"), ("title", title)], file: photo) }
            let calls = [#"{"IdPhoto":3}"#, #"{"IdPhoto":99}"#, #"{"IdPhoto":2}"#, #"{"IdPhoto":3}"#, #"{"IdPhoto":-4}"#,
                         #"{"IdPhoto":4,"extras":"likes"}"#, #"{"IdPhoto":2,"count":0}"#]
                .enumerated().map { #"{"jsonrpc":"2.0","method":"stream","params":\#($1),"id":\#($0)}"# }
            func rpc(_ body: String) -> String {
                String(decoding: phone.api.handle(jsonRPC: Array(body.utf8), of: APIRequest(parameters: FormData())).body, as: UTF8.self)
            }
            func statements() throws -> Int64 {
                try #require(phone.database.query("SHOW SESSION STATUS LIKE 'Com_stmt_execute'").first?.int64("Value"))
            }
            let alone = calls.map(rpc)
            let before = try statements()
            let batch = rpc("[" + calls.joined(separator: ",") + "]")
            let executed = try statements() - before
            #expect(batch == "[" + alone.joined(separator: ",") + "]", "each call's answer as alone, in order")
            #expect(alone[0].contains(#""title":"b""#) && alone[1].contains(#""result":[]"#), "\(alone)")
            // The read ahead and the call with extras; the SHOW itself counts once.
            #expect(executed == 3, "\(executed) statements")
        }

        @Test func pagesAreIndexRanges() throws {
            for schema in ["schema.sql", "original-myisam.sql"] {
                let phone = try APIHarness(schema: schema)
                try phone.database.execute("INSERT INTO login (username, pass) SELECT CONCAT('u', seq), 'p' FROM seq_1_to_20")
                try phone.database.execute("INSERT INTO photos (IdUser, title) SELECT 1 + seq % 20, 't' FROM seq_1_to_5000")
                try phone.database.execute("""
                    INSERT INTO comments (IdPhoto, IdUser, text, created) SELECT 2 + seq % 50, 1 + seq % 20, 'c', 0 FROM seq_1_to_5000
                    """)
                try phone.database.execute("""
                    INSERT INTO votes (IdPhoto, IdUser, vote) SELECT 1 + seq DIV 20, 1 + seq % 20, IF(seq % 3, 1, -1) FROM seq_1_to_5000
                    """)
                for table in ["login", "photos", "comments", "votes"] { _ = try phone.database.query("ANALYZE TABLE \(table)") }
                let deep: [DatabaseValue] = [.int(0), .int(1000), .int(50)]
                // Newest first, and oldest first from `since` (`after`).
                let plans: [(String, [DatabaseValue], String)] = ["DESC", "ASC"].flatMap { order in [
                    (MariaDBPhotoStore.pageSQL(ofUser: false, withExtras: false, order: order), deep, "PRIMARY"),
                    (MariaDBPhotoStore.pageSQL(ofUser: true, withExtras: false, order: order), [.int(0), .int(1000), .int(3), .int(50)],
                     "IdUser_IdPhoto"),
                    (MariaDBPhotoStore.pageSQL(ofUser: false, withExtras: true, order: order), [.int(1)] + deep, "PRIMARY"),
                    (MariaDBCommentStore.pageSQL(order: order), [.int(7), .int(0), .int(4000), .int(50)], "IdPhoto_IdComment"),
                    (MariaDBCommentStore.byUserSQL(order: order), [.int(7), .int(0), .int(4000), .int(50)], "IdUser_IdComment"),
                    (MariaDBVoteStore.likedSQL(order: order), [.int(7), .int(0), .int(200), .int(40)], "IdUser_IdPhoto_vote"),
                ] }
                for (sql, parameters, key) in plans {
                    let first = try #require(try TestServices.explain(sql, parameters, phone.database).first)
                    let extra = first["Extra"].map { String(decoding: $0, as: UTF8.self) } ?? ""
                    #expect(first["type"] == Array("range".utf8), "\(schema) \(sql): \(extra)")
                    #expect(first["key"] == Array(key.utf8), "\(schema) \(sql)")
                    #expect(!extra.contains("filesort") && !extra.contains("temporary"), "\(schema) \(sql): \(extra)")
                    if key == "IdUser_IdPhoto_vote" { #expect(extra.contains("Using index"), "the index alone: \(extra)") }
                }
            }
            try TestServices.resetTables(APIHarness().database)
        }

        @Test func aDeletionCutShortOnMyISAMIsRepaired() throws {
            let phone = try APIHarness(schema: "original-myisam.sql")
            try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
            try phone.send([("command", "upload"), ("title", "t")], file: photo)
            try phone.send([("command", "like"), ("IdPhoto", "2")])
            try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "x")])
            let secret = try #require(try MariaDBPhotoStore(database: phone.database).secret(of: 2))
            // The MyISAM row went, the InnoDB rows were rolled back (the connection died before COMMIT).
            try phone.database.execute("DELETE FROM photos WHERE IdPhoto = 2")
            let repair = PhotoRepair(files: UploadFolder(directory: phone.uploads.path),
                                     photos: MariaDBPhotoStore(database: phone.database), maxImagePixels: 50_000_000)
            // force: the only photo gone looks like the wrong database to repair's checks.
            let dry = try repair.run(graceSeconds: 0, actions: .dryRun)
            #expect(dry.orphanReactions == 7 && !dry.isClean, "a dry run counts what --yes would remove")
            #expect(try phone.rowCount("comments") == 1)
            let everything = PhotoRepair.Actions.all(force: true)
            let report = try repair.run(graceSeconds: 0, actions: everything)
            #expect(report.filesWithoutRow == ["2-thumb.jpg", "2.jpg", "photos/000/000/2_\(secret)_o.jpg"])
            #expect(report.orphanReactions == 7, "the vote, the comment, the counts, the details, two search words (t, alice), the secret")
            for table in ["votes", "comments", "photo_details", "photo_counts", "photo_words", "photo_secrets"] {
                #expect(try phone.rowCount(table) == 0, "\(table)")
            }
            #expect(try repair.run(graceSeconds: 0, actions: everything).isClean)
            try TestServices.resetTables(phone.database)
        }
    }
}
