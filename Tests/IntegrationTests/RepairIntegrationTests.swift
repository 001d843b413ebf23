#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

extension DatabaseTests {
    /// What a crash at each step of an upload leaves, and what repair makes of it.
    @Suite struct RepairIntegrationTests {
        let photo = makeJPEG(width: 640, height: 480)

        @Test func repairClearsDebrisAndKeepsGoodPhotos() throws {
            let phone = try APIHarness()
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
            #expect(try phone.body([("command", "upload"), ("title", "kept")], file: photo) == #"{"successful":1}"#)   // 2
            #expect(try phone.body([("command", "upload"), ("title", "lost thumb")], file: photo) == #"{"successful":1}"#) // 3
            unlink("\(phone.uploads.path)/3-thumb.jpg")
            // Killed mid-upload: a spool file; files renamed but row never committed (9);
            // a thumbnail alone (10); a row whose files never came (MyISAM, PHP's "no file").
            _ = phone.uploads.write(".spool-AbCdEf", photo)
            _ = phone.uploads.write("9.jpg", photo)
            _ = phone.uploads.write("9-thumb.jpg", photo)
            _ = phone.uploads.write("10-thumb.jpg", photo)
            _ = phone.uploads.write("notes.txt", Array("operator's".utf8))
            try phone.database.execute("INSERT INTO photos (IdUser, title) VALUES (1, 'no file')") // 4
            let repair = PhotoRepair(files: UploadFolder(directory: phone.uploads.path), photos: MariaDBPhotoStore(database: phone.database), maxImagePixels: 50_000_000)

            // What the start-up sweep does: files only.
            let young = try repair.run(graceSeconds: 3600, actions: .init(setAsideFiles: true))
            #expect(young.spools.isEmpty && young.filesWithoutRow.isEmpty, "files younger than the grace time are left alone")
            #expect(young.youngFilesWithoutRow == 3
                    && young.summary.contains("0 files without a row and 3 younger than the grace time (not judged)"), "but said")
            #expect(young.rowsWithoutPhoto == [4] && !young.applied.contains(.rows))

            let dry = try repair.run(graceSeconds: 0, actions: .dryRun)
            #expect(dry.filesWithoutRow == ["10-thumb.jpg", "9-thumb.jpg", "9.jpg"])
            #expect(dry.applied.isEmpty && phone.uploads.entries.contains("9.jpg"), "a dry run changes nothing")

            // Without --yes: the safe steps only.
            let safe = try repair.run(graceSeconds: 0, actions: .init())
            #expect(safe.applied == [.spools, .thumbnails, .sizes, .names])
            #expect(safe.spools == [".spool-AbCdEf"] && safe.missingThumbnails == [3])
            #expect(phone.uploads.entries.contains("9.jpg"))
            #expect(try phone.rowCount("photos") == 3)

            let report = try repair.run(graceSeconds: 0, actions: .all())
            #expect(report.filesWithoutRow == ["10-thumb.jpg", "9-thumb.jpg", "9.jpg"])
            #expect(report.rowsWithoutPhoto == [4])
            #expect(report.applied == [.spools, .thumbnails, .reactions, .files, .rows, .sizes, .names])
            #expect(phone.uploads.entries == [".ireporter-upload-dir", ".removed", "2-thumb.jpg", "2.jpg", "3-thumb.jpg", "3.jpg", "notes.txt",
                                              "photos"])
            #expect(jpegSize(try #require(readFile("\(phone.uploads.path)/3-thumb.jpg")))! == (180, 180))
            #expect(try phone.rowCount("photos") == 2)
            #expect(try repair.run(graceSeconds: 0, actions: .all()).isClean, "a second run finds nothing")

            // Restorable: the files are in .removed/, the row in photos_removed, as docs/RELIABILITY.md says.
            #expect(Set(try ScratchDirectory.names(in: "\(phone.uploads.path)/.removed")) == ["10-thumb.jpg", "9-thumb.jpg", "9.jpg"])
            let removed = try phone.database.query("SELECT IdPhoto, title, IdUser, reason FROM photos_removed WHERE IdPhoto = 4")
            #expect(removed.first?["title"] == Array("no file".utf8))
            let reason = String(decoding: removed.first?["reason"] ?? [], as: UTF8.self)
            #expect(reason.hasPrefix("no photo file in "))
            try phone.database.execute("INSERT INTO photos (IdPhoto, title, IdUser) SELECT IdPhoto, title, IdUser FROM photos_removed WHERE IdPhoto = 4")
            #expect(try phone.rowCount("photos") == 3)
        }

        /// A row set aside keeps what hangs on its id (likes, comments, its
        /// secret and details), which later runs' orphan sweep once removed:
        /// restored as documented, the photo is whole again.
        @Test func aRowSetAsideIsRestoredWhole() throws {
            let phone = try APIHarness()
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
            for title in ["a", "b", "lost"] { // 2, 3, 4
                #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
            }
            try phone.send([("command", "like"), ("IdPhoto", "4")])
            try phone.send([("command", "comment"), ("IdPhoto", "4"), ("text", "Kept")])
            let store = MariaDBPhotoStore(database: phone.database)
            let secret = try #require(try store.secret(of: 4))
            let folder = UploadFolder(directory: phone.uploads.path)
            try folder.discard(id: 4)
            let repair = PhotoRepair(files: folder, photos: store, maxImagePixels: 50_000_000)
            for _ in 0..<2 { _ = try repair.run(graceSeconds: 0, actions: .all()) }
            #expect(try store.existing([4]).isEmpty && phone.rowCount("photos_removed") == 1)
            #expect(try store.secret(of: 4) == nil, "set aside: no size of it is served, should its files come back first")

            try phone.database.execute("INSERT INTO photos (IdPhoto, title, IdUser) SELECT IdPhoto, title, IdUser FROM photos_removed WHERE IdPhoto = 4")
            #expect(try store.secret(of: 4) == secret)
            #expect(try phone.body([("command", "comments"), ("IdPhoto", "4")]).contains(#""text":"Kept""#))
            #expect(try phone.body([("command", "stream"), ("extras", "likes,comments,created"), ("count", "1")])
                .contains(#""likes":"1","comments":"1","created":""#))
        }

        /// A row deleted outside the API (a one-table restore, a wrong
        /// DELETE) while its files stay: the sweep and a plain `repair` count
        /// its likes, comments and secret but keep them, so the row put back
        /// brings the photo back whole; `--yes` removes them.
        @Test func theReactionsOfARowDeletedOutsideTheAPIAreKeptUntilYes() throws {
            let phone = try APIHarness()
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
            for title in ["a", "b", "liked"] { // 2, 3, 4
                #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
            }
            try phone.send([("command", "like"), ("IdPhoto", "4")])
            try phone.send([("command", "comment"), ("IdPhoto", "4"), ("text", "Kept")])
            let store = MariaDBPhotoStore(database: phone.database)
            let secret = try #require(try store.secret(of: 4))
            try phone.database.execute("DELETE FROM photos WHERE IdPhoto = 4")
            let repair = PhotoRepair(files: UploadFolder(directory: phone.uploads.path), photos: store, maxImagePixels: 50_000_000)
            for actions in [PhotoRepair.Actions(setAsideFiles: true), .init(), .dryRun] { // the sweep's, a plain repair's, a dry run's
                let report = try repair.run(graceSeconds: 3600, actions: actions)
                #expect(report.orphanReactions > 0 && !report.applied.contains(.reactions) && !report.isClean)
                #expect(report.summary.contains("reactions of deleted photos or accounts (not removed)"), "\(report.summary)")
            }
            try phone.database.execute("INSERT INTO photos (IdPhoto, title, IdUser) VALUES (4, 'liked', 1)")
            #expect(try store.secret(of: 4) == secret, "its size URLs work again")
            #expect(try phone.body([("command", "comments"), ("IdPhoto", "4")]).contains(#""text":"Kept""#))
            #expect(try phone.body([("command", "stream"), ("extras", "likes,comments"), ("count", "1")])
                .contains(#""likes":"1","comments":"1""#))

            try phone.database.execute("DELETE FROM photos WHERE IdPhoto = 4")
            let yes = try repair.run(graceSeconds: 3600, actions: .all())
            #expect(yes.applied.contains(.reactions) && yes.summary.contains("reactions of deleted photos or accounts (removed)"))
            for table in ["votes", "comments", "photo_secrets", "photo_counts"] {
                #expect(try phone.database.query("SELECT 1 FROM \(table) WHERE IdPhoto = 4").isEmpty, "\(table)")
            }
        }

        /// Ids the counter hands out again while earlier photos' rows still
        /// hold them (a row set aside, another deleted outside the API, then
        /// AUTO_INCREMENT lowered, as a restore does): each is skipped, the
        /// upload stored under the next free one, nothing of theirs changed.
        @Test(arguments: ["schema.sql", "original-myisam.sql"])
        func anUploadSkipsIdsThatEarlierPhotosStillHold(schema: String) throws {
            let phone = try APIHarness(schema: schema)
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
            for title in ["a", "set aside", "deleted"] { // 2, 3, 4
                #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
            }
            try phone.send([("command", "comment"), ("IdPhoto", "3"), ("text", "Kept")])
            let store = MariaDBPhotoStore(database: phone.database)
            let folder = UploadFolder(directory: phone.uploads.path)
            try folder.discard(id: 3)
            // As a photo the PHP version stored: no details, no secret (setting it aside gives it one).
            try phone.database.execute("DELETE FROM photo_details WHERE IdPhoto = 3")
            try phone.database.execute("DELETE FROM photo_secrets WHERE IdPhoto = 3")
            _ = try PhotoRepair(files: folder, photos: store, maxImagePixels: 50_000_000).run(graceSeconds: 0, actions: .all())
            try phone.database.execute("DELETE FROM photos WHERE IdPhoto = 4")
            try phone.database.execute("ALTER TABLE photos AUTO_INCREMENT = 3")
            let held = try phone.database.query("SELECT IdPhoto, secret FROM photo_secrets WHERE IdPhoto IN (3, 4) ORDER BY IdPhoto")

            #expect(try phone.body([("command", "upload"), ("title", "new")], file: photo) == #"{"successful":1}"#)
            #expect(try phone.body([("command", "stream"), ("count", "1")]).contains(#""IdPhoto":"5","title":"new""#))
            #expect(try phone.database.query("SELECT IdPhoto, secret FROM photo_secrets WHERE IdPhoto IN (3, 4) ORDER BY IdPhoto")
                .map { $0["secret"] } == held.map { $0["secret"] })
            #expect(try phone.database.query("SELECT text FROM comments WHERE IdPhoto = 3").first?["text"] == Array("Kept".utf8))
            #expect(try store.existing([3, 4]).isEmpty, "no row of the skipped ids is left")
            try TestServices.resetTables(phone.database)
        }

        /// Restored files are as young as the copy: with the photos table
        /// emptied (the wrong database, a restore gone wrong), `--yes` must
        /// not delete every photo's likes, comments and secret because no
        /// file was old enough to show the mismatch.
        @Test func yesRefusesToDeleteReactionsWhenTheTableLooksWrong() throws {
            let phone = try APIHarness()
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
            for title in ["a", "b", "c"] { // 2, 3, 4
                #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
            }
            try phone.send([("command", "comment"), ("IdPhoto", "4"), ("text", "Kept")])
            let repair = PhotoRepair(files: UploadFolder(directory: phone.uploads.path), photos: MariaDBPhotoStore(database: phone.database),
                                     maxImagePixels: 50_000_000)
            // Most rows gone, the files all younger than the grace time.
            try phone.database.execute("DELETE FROM photos WHERE IdPhoto > 2")
            let most = try repair.run(graceSeconds: 3600, actions: .all())
            #expect(most.refusal?.contains("2 of the 3 photo files") == true && most.applied.isEmpty, "\(most.refusal ?? "")")
            try phone.database.execute("DELETE FROM photos")
            let all = try repair.run(graceSeconds: 3600, actions: .all())
            #expect(all.refusal?.contains("the photos table is empty") == true && all.applied.isEmpty, "\(all.refusal ?? "")")
            #expect(try phone.rowCount("comments") == 1 && phone.rowCount("photo_secrets") == 3)
        }

        /// An account deleted takes its photos set aside too, with what hangs on their ids.
        @Test func anAccountsDeletionTakesItsPhotosSetAside() throws {
            let phone = try APIHarness()
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
            for title in ["a", "b", "lost"] { // 2, 3, 4
                #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
            }
            try phone.send([("command", "comment"), ("IdPhoto", "4"), ("text", "Kept")])
            let store = MariaDBPhotoStore(database: phone.database)
            try UploadFolder(directory: phone.uploads.path).discard(id: 4)
            _ = try PhotoRepair(files: UploadFolder(directory: phone.uploads.path), photos: store, maxImagePixels: 50_000_000)
                .run(graceSeconds: 0, actions: .all())
            #expect(try phone.rowCount("photos_removed") == 1 && phone.rowCount("comments") == 1)
            #expect(try phone.body([("command", "delete_account"), ("password", "x")]) == #"{"successful":1}"#)
            for table in ["photos_removed", "comments", "photo_secrets", "photo_details", "photo_counts", "photo_words"] {
                #expect(try phone.rowCount(table) == 0, "\(table)")
            }
        }

        /// A thumbnail missing beside a photo the PHP version stored that is
        /// no JPEG (a PNG): not reported as made; one that only makes
        /// libjpeg warn (stored as is by PHP) is made, as GD makes it.
        @Test func thumbnailsThatCannotBeMadeAreSaidSo() throws {
            let phone = try APIHarness()
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
            #expect(try phone.body([("command", "upload"), ("title", "a")], file: photo) == #"{"successful":1}"#) // 2
            try phone.database.execute("INSERT INTO photos (IdUser, title) VALUES (1, 'png'), (1, 'warns')") // 3, 4
            _ = phone.uploads.write("3.jpg", makePNG(width: 40, height: 30))
            _ = phone.uploads.write("4.jpg", Array(photo.dropLast(2)) + Array(repeating: 0x20, count: 100) + [0xFF, 0xD9])
            let repair = PhotoRepair(files: UploadFolder(directory: phone.uploads.path), photos: MariaDBPhotoStore(database: phone.database),
                                     maxImagePixels: 50_000_000)
            let report = try repair.run(graceSeconds: 0, actions: .init())
            #expect(report.missingThumbnails == [3, 4] && report.unmadeThumbnails == [3])
            #expect(report.summary.contains("2 missing thumbnails (made) but 1 whose original is no JPEG"), "\(report.summary)")
            #expect(phone.uploads.entries.contains("4-thumb.jpg") && !phone.uploads.entries.contains("3-thumb.jpg"))
        }

        /// The tree: sizes under an old secret removed, files of no row set
        /// aside, and the 2012 names removed or given back as
        /// `legacy_photo_urls` says, a photo the PHP version stored included.
        @Test func theTreeIsReconciledAndTheOldNamesFollowTheSetting() throws {
            let phone = try APIHarness()
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
            for title in ["a", "b"] { // 2, 3
                #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
            }
            try phone.database.execute("INSERT INTO photos (IdUser, title) VALUES (1, 'by PHP')") // 4, no secret
            _ = phone.uploads.write("4.jpg", photo)
            _ = phone.uploads.write("4-thumb.jpg", makeJPEG(width: 180, height: 180))
            let store = MariaDBPhotoStore(database: phone.database)
            let secrets = try store.secrets(ids: [2, 3])
            let folder = UploadFolder(directory: phone.uploads.path)
            let sizes = PhotoSizes(photos: store, files: folder, policy: AppServices.Policy(), decodeGate: nil)
            guard case .found = sizes.size(.medium640, id: 2, secret: secrets[2]!) else { Issue.record("no z"); return }
            _ = phone.uploads.write("photos/000/000/2_0000000000_q.jpg", photo)   // a size under an old secret
            _ = phone.uploads.write("photos/000/000/9_aaaaaaaaaa_o.jpg", photo)   // no row
            func repair(legacyNames: Bool) throws -> PhotoRepair.Report {
                try PhotoRepair(files: UploadFolder(directory: phone.uploads.path, legacyNames: legacyNames), photos: store,
                                maxImagePixels: 50_000_000).run(graceSeconds: 0, actions: .init(setAsideFiles: true))
            }
            let tree = "\(phone.uploads.path)/photos/000/000"

            let on = try repair(legacyNames: true)
            #expect(on.staleSizes == ["photos/000/000/2_0000000000_q.jpg"] && on.misnamed.isEmpty, "\(on.summary)")
            #expect(on.filesWithoutRow == ["photos/000/000/9_aaaaaaaaaa_o.jpg"] && on.refusal == nil)
            #expect(try ScratchDirectory.names(in: tree) == ["2_\(secrets[2]!)_o.jpg", "2_\(secrets[2]!)_z.jpg", "3_\(secrets[3]!)_o.jpg"])
            #expect(try repair(legacyNames: true).isClean)

            // legacy_photo_urls = off: every photo in the tree alone, the PHP version's given a secret.
            let off = try repair(legacyNames: false)
            #expect(off.misnamed == [2, 3, 4] && off.applied.contains(.names), "\(off.summary)")
            let secret4 = try #require(try store.secret(of: 4))
            #expect(try ScratchDirectory.names(in: tree) == ["2_\(secrets[2]!)_o.jpg", "2_\(secrets[2]!)_z.jpg", "3_\(secrets[3]!)_o.jpg",
                                                             "4_\(secret4)_o.jpg"])
            #expect(phone.uploads.entries.filter { $0.hasSuffix(".jpg") }.isEmpty, "no guessable name left")
            #expect(readFile("\(tree)/4_\(secret4)_o.jpg") == photo)
            #expect(try repair(legacyNames: false).isClean)
            #expect(try phone.body([("command", "upload"), ("title", "new")], file: photo) == #"{"successful":1}"#) // 5, still on

            // And on again: the 2012 names and thumbnails come back.
            let back = try repair(legacyNames: true)
            #expect(back.misnamed == [2, 3, 4] && back.applied.contains(.names), "\(back.summary)")
            for id in 2...5 {
                #expect(jpegSize(try #require(readFile("\(phone.uploads.path)/\(id)-thumb.jpg")))! == (180, 180))
                #expect(readFile("\(phone.uploads.path)/\(id).jpg") != nil)
            }
            #expect(try repair(legacyNames: true).isClean)
        }

        @Test func aWrongFolderOrDatabaseIsRefusedWholesale() throws {
            let phone = try APIHarness()
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
            for title in ["a", "b", "c"] {
                #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
            }
            let everything = PhotoRepair.Actions.all()
            let store = MariaDBPhotoStore(database: phone.database)
            // upload_dir pointing at an empty folder (a typo, a disk not mounted).
            let empty = ScratchDirectory("empty-upload")
            let wrong = try PhotoRepair(files: UploadFolder(directory: empty.path), photos: store, maxImagePixels: 50_000_000)
                .run(graceSeconds: 0, actions: everything)
            #expect(wrong.rowsWithoutPhoto == [2, 3, 4] && wrong.applied.isEmpty)
            #expect(wrong.refusal?.contains("holds no photo file") == true)
            #expect(try phone.rowCount("photos") == 3, "not one row touched")
            // The right folder with the wrong database: every file without a row.
            try phone.database.command("DELETE FROM photos")
            let repair = PhotoRepair(files: UploadFolder(directory: phone.uploads.path), photos: store, maxImagePixels: 50_000_000)
            let wrongDatabase = try repair.run(graceSeconds: 0, actions: everything)
            #expect(wrongDatabase.refusal?.contains("the wrong database") == true && wrongDatabase.applied.isEmpty)
            #expect(phone.uploads.entries.contains("2.jpg"))
            // --force: the operator says it is right.
            let forced = try repair.run(graceSeconds: 0, actions: .all(force: true))
            #expect(forced.applied.contains(.files) && !phone.uploads.entries.contains("2.jpg"))
        }
    }
}
