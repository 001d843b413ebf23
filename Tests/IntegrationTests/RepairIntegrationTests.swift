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
            let repair = UploadRepair(files: UploadFolder(directory: phone.uploads.path), photos: MariaDBPhotoStore(database: phone.database), maxImagePixels: 50_000_000)

            let young = try repair.run(graceSeconds: 3600, deleteRows: false)
            #expect(young.removedSpools.isEmpty && young.removedOrphanFiles.isEmpty, "files younger than the grace time are left alone")

            let dry = try repair.run(graceSeconds: 0, deleteRows: true, dryRun: true)
            #expect(dry.removedOrphanFiles == ["10-thumb.jpg", "9-thumb.jpg", "9.jpg"])
            #expect(phone.uploads.entries.contains("9.jpg"), "a dry run changes nothing")

            let report = try repair.run(graceSeconds: 0, deleteRows: true)
            #expect(report.removedSpools == [".spool-AbCdEf"])
            #expect(report.removedOrphanFiles == ["10-thumb.jpg", "9-thumb.jpg", "9.jpg"])
            #expect(report.regeneratedThumbnails == [3])
            #expect(report.rowsWithoutPhoto == [4])
            #expect(report.deletedRows == [4])
            #expect(phone.uploads.entries == ["2-thumb.jpg", "2.jpg", "3-thumb.jpg", "3.jpg", "notes.txt"])
            #expect(jpegSize(try #require(readFile("\(phone.uploads.path)/3-thumb.jpg")))! == (180, 180))
            #expect(try phone.rowCount("photos") == 2)
            #expect(try repair.run(graceSeconds: 0, deleteRows: true).isClean, "a second run finds nothing")
        }
    }
}
