#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// Photos in a bucket of a real S3-compatible server that checks every
/// signature (scripts/s3-server.py), through the app's commands on the
/// real database: what is stored before the row commits, what a delete
/// removes, the size route, and what a phone gets from a store that
/// refuses or does not answer.
extension DatabaseTests {
@Suite(.enabled(if: S3TestServer.available, "needs moto: scripts/deps.sh installs it"))
struct S3PhotoStoreIntegrationTests {
    static let alicePass = "18c69224371c58c547b68bfa6d28dc8aeff006e4"
    static let unavailable = #"{"error":"The service is temporarily unavailable, please try again"}"#
    let photo = makeJPEG(width: 800, height: 600)
    let spools = ScratchDirectory("s3-spools")

    /// A bucket of its own (the tables restart at IdPhoto 1 in every test).
    func store(_ change: (inout S3Settings) -> Void = { _ in }) throws -> S3PhotoFileStore {
        var settings = S3TestServer.shared.settings
        settings.bucket = "test-\(UInt32.random(in: .min ... .max))"
        // 3 s: a PUT to moto on a busy machine may be slow, and none is retried.
        settings.timeoutMillis = 3000
        try S3Client(settings: settings).createBucket()
        change(&settings)
        return S3PhotoFileStore(client: S3Client(settings: settings), spoolDirectory: spools.path)
    }

    func signedIn(_ files: S3PhotoFileStore) throws -> APIHarness {
        let phone = try APIHarness(photoFiles: files)
        _ = try phone.send([("command", "register"), ("username", "alice"), ("password", Self.alicePass)])
        return phone
    }

    func keys(_ files: S3PhotoFileStore) throws -> [String] { try files.client.list(prefix: "").map(\.key) }

    func lastPhotoID(_ phone: APIHarness) throws -> Int64 {
        Int64(String(decoding: try phone.database.query("SELECT MAX(IdPhoto) FROM photos")[0][0]!, as: UTF8.self))!
    }

    @Test func anUploadIsInTheBucketBeforeItsRowAndADeleteRemovesEverySize() throws {
        let files = try store()
        let phone = try signedIn(files)
        #expect(try phone.body([("command", "upload"), ("title", "pier")], file: photo) == #"{"successful":1}"#)
        let id = try lastPhotoID(phone)
        let secret = try #require(try MariaDBPhotoStore(database: phone.database).secret(of: id))
        let original = S3PhotoFileStore.treeKey(id: id, secret: secret, size: .original)
        #expect(try keys(files) == [original, "upload/\(id)-thumb.jpg", "upload/\(id).jpg"])
        #expect(jpegSize(try #require(try files.client.get("upload/\(id)-thumb.jpg")))! == (180, 180))
        #expect(try files.client.get(original) == files.client.get("upload/\(id).jpg"))
        #expect(try files.legacyObject(named: "\(id).jpg") != nil && files.legacyObject(named: "\(id).jpg.bak") == nil)
        #expect(spools.entries.isEmpty, "the spool file is consumed")
        #expect(phone.uploads.entries.isEmpty)

        let sizes = PhotoSizes(photos: MariaDBPhotoStore(database: phone.database), files: files,
                               policy: AppServices.Policy(), decodeGate: nil)
        guard case .found(let z) = sizes.size(.medium640, id: id, secret: secret) else { Issue.record("no z"); return }
        #expect(jpegSize(z)! == (640, 480))
        #expect(try files.storedSize(.medium640, id: id, secret: secret) == z, "kept in the bucket")
        guard case .found(let q) = sizes.size(.square150, id: id, secret: secret) else { Issue.record("no q"); return }
        #expect(jpegSize(q)! == (150, 150))
        guard case .notFound = sizes.size(.medium640, id: id, secret: PhotoSecret.random()) else {
            Issue.record("another secret"); return
        }
        #expect(try keys(files).count == 5, "nothing made for a wrong secret")
        #expect(spools.entries.isEmpty, "the renders' sources are removed")

        #expect(try phone.body([("command", "delete"), ("IdPhoto", "\(id)")]) == #"{"successful":1}"#)
        #expect(try keys(files).isEmpty)
    }

    /// As in the folder (`PhotoSizeDeleteIntegrationTests`): a size made
    /// while the photo is deleted is not kept, and a photo whose original is
    /// gone is a 404 that repair lists and keeps.
    @Test func aDeleteWinsOverASizeAndALostOriginalIsANotFoundRepairKeeps() throws {
        let files = try store()
        let phone = try signedIn(files)
        for title in ["raced", "lost"] {
            #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
        }
        let photos = MariaDBPhotoStore(database: phone.database)
        let (raced, lost) = (try lastPhotoID(phone) - 1, try lastPhotoID(phone))
        let racedSecret = try #require(try photos.secret(of: raced)), lostSecret = try #require(try photos.secret(of: lost))
        typealias Meanwhile = DatabaseTests.PhotoSizeDeleteIntegrationTests.DeletingMeanwhile
        let deleting = Meanwhile(files, at: .beforePlacing) { () throws -> Void in
            let answer = try phone.body([("command", "delete"), ("IdPhoto", "\(raced)")])
            #expect(answer == #"{"successful":1}"#)
        }
        let outcome = PhotoSizes(photos: photos, files: deleting, policy: AppServices.Policy(), decodeGate: nil)
            .size(.large, id: raced, secret: racedSecret)
        guard case .notFound = outcome else { Issue.record("answered \(outcome) for a deleted photo"); return }
        #expect(try files.client.list(prefix: S3PhotoFileStore.treePrefix(id: raced)).isEmpty)

        let sizes = PhotoSizes(photos: photos, files: files, policy: AppServices.Policy(), decodeGate: nil)
        guard case .found = sizes.size(.medium640, id: lost, secret: lostSecret) else { Issue.record("no z"); return }
        try files.client.delete(S3PhotoFileStore.treeKey(id: lost, secret: lostSecret, size: .original))
        try files.client.delete(S3PhotoFileStore.photoKey(id: lost))
        for size in [PhotoSize.large, .original] {
            guard case .notFound = sizes.size(size, id: lost, secret: lostSecret) else { Issue.record("\(size) answered"); continue }
        }
        let repair = PhotoRepair(files: files, photos: photos, maxImagePixels: 50_000_000, maxDecodeBytes: 256 << 20)
        let report = try repair.run(graceSeconds: 0, actions: .all(force: true), progress: nil)
        #expect(report.lostOriginals == [lost] && report.rowsWithoutPhoto.isEmpty, "\(report.summary)")
        #expect(try photos.existing([lost]) == [lost], "the row is kept")
        #expect(try files.storedSize(.medium640, id: lost, secret: lostSecret) != nil, "and what is left of it")
    }

    @Test func aPhotoStoredBeforeTheTreeGetsItsOriginalThereWhenASizeIsAsked() throws {
        let files = try store()
        let phone = try signedIn(files)
        let id = Int64(try phone.database.execute("INSERT INTO photos (IdUser, title) VALUES (1, 'old')").insertID)
        let secret = PhotoSecret.random()
        try phone.database.execute("INSERT INTO photo_secrets (IdPhoto, secret) VALUES (?, ?)",
                                   [.int(id), .bytes(Array(secret.description.utf8))])
        try files.client.put("upload/\(id).jpg", photo)
        let sizes = PhotoSizes(photos: MariaDBPhotoStore(database: phone.database), files: files,
                               policy: AppServices.Policy(), decodeGate: nil)
        guard case .found(let original) = sizes.size(.original, id: id, secret: secret) else { Issue.record("no o"); return }
        #expect(original == photo)
        #expect(try files.client.get(S3PhotoFileStore.treeKey(id: id, secret: secret, size: .original)) == photo)
    }

    @Test func aStoreThatRefusesTheKeyLeavesNoRowNoObjectNoSpool() throws {
        let files = try store { $0.secretKey += "x" }
        let phone = try signedIn(files)
        #expect(try phone.body([("command", "upload"), ("title", "refused")], file: photo)
                == #"{"error":"Upload on server problem"}"#)
        #expect(try phone.rowCount("photos") == 0)
        #expect(spools.entries.isEmpty && phone.uploads.entries.isEmpty)
    }

    @Test func aStoreDownIsTemporarilyUnavailableAndTheStreamGoesOn() throws {
        let files = try store()
        let phone = try signedIn(files)
        #expect(try phone.body([("command", "upload"), ("title", "before")], file: photo) == #"{"successful":1}"#)
        // The upload made while the store is frozen goes through a worker whose store gives up
        // after 1 s (the bounded wait); the others keep the 3 s of `store`.
        var short = files.client.settings
        short.timeoutMillis = 1000
        let stalled = S3PhotoFileStore(client: S3Client(settings: short), spoolDirectory: spools.path)
        let stalledWorker = IReporterAPI(services: APIHarness.services(
            database: phone.database, sessions: phone.sessions, counters: phone.counters, uploadDirectory: phone.uploads.path,
            policy: APIHarness.fastHashing, photoFiles: stalled, clock: phone.clock))
        S3TestServer.shared.freeze(true)
        defer { S3TestServer.shared.freeze(false) }
        #expect(try phone.body([("command", "upload"), ("title", "down")], file: photo, through: stalledWorker) == Self.unavailable)
        #expect(try phone.body([("command", "stream")]).contains(#""title":"before""#))
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", Self.alicePass)])
                .contains(#""username":"alice""#))
        #expect(try phone.rowCount("photos") == 1, "no row for the photo the store did not take")
        #expect(spools.entries.isEmpty && phone.uploads.entries.isEmpty, "no spool left")
        S3TestServer.shared.freeze(false)
        // moto first works off the PUT it took while frozen: the store that gave up is asked again until answered (bounded).
        #expect(S3TestServer.shared.answersAgain { _ = try stalled.client.exists("probe.jpg") }, "the store is answered again")
        #expect(try phone.body([("command", "upload"), ("title", "after")], file: photo) == #"{"successful":1}"#)
        #expect(try files.client.get("upload/\(try lastPhotoID(phone)).jpg") != nil)
    }
    @Test func repairReconcilesRowsAndObjectsBothWaysAndRefusesAWrongBucket() throws {
        let files = try store()
        let phone = try signedIn(files)
        for title in ["kept", "lost thumb"] {
            #expect(try phone.body([("command", "upload"), ("title", title)], file: photo) == #"{"successful":1}"#)
        }
        let lostThumb = try lastPhotoID(phone), kept = lostThumb - 1
        try files.client.delete(S3PhotoFileStore.thumbnailKey(id: lostThumb))
        // An upload whose store answered after the request gave up: objects, no row.
        let orphanSecret = PhotoSecret.random()
        let orphans = [S3PhotoFileStore.treeKey(id: 99, secret: orphanSecret, size: .original), "upload/99-thumb.jpg", "upload/99.jpg"]
        for key in orphans { try files.client.put(key, photo) }
        try files.client.put("notes.txt", Array("operator's".utf8))
        // A size under an old secret, a row whose photo never came, a spool file left by a crash.
        let keptSecret = try #require(try MariaDBPhotoStore(database: phone.database).secret(of: kept))
        let stale = S3PhotoFileStore.treeKey(id: kept, secret: PhotoSecret.random(), size: .medium640)
        try files.client.put(stale, photo)
        let noObject = Int64(try phone.database.execute("INSERT INTO photos (IdUser, title) VALUES (1, 'no file')").insertID)
        _ = spools.write(".spool-AbCdEf", photo)
        let repair = PhotoRepair(files: files, photos: MariaDBPhotoStore(database: phone.database), maxImagePixels: 50_000_000,
                                 maxDecodeBytes: 256 << 20)

        let young = try repair.run(graceSeconds: 3600, actions: .init(setAsideFiles: true), progress: nil)
        #expect(young.filesWithoutRow.isEmpty && young.spools.isEmpty && young.staleSizes.isEmpty,
                "objects younger than the grace time (an upload committing) are left alone")
        #expect(young.rowsWithoutPhoto == [noObject] && !young.applied.contains(.rows))

        let dry = try repair.run(graceSeconds: 0, actions: .dryRun, progress: nil)
        #expect(dry.filesWithoutRow == orphans && dry.missingThumbnails == [lostThumb] && dry.staleSizes == [stale])
        #expect(dry.spools == [".spool-AbCdEf"] && dry.rows == 3 && dry.photoFiles == 3)
        #expect(dry.applied.isEmpty)
        #expect(try files.client.exists("upload/99.jpg"), "a dry run changes nothing")

        let report = try repair.run(graceSeconds: 0, actions: .all(), progress: nil)
        #expect(report.applied == [.spools, .thumbnails, .reactions, .files, .rows, .sizes, .names] && report.refusal == nil)
        #expect(try keys(files) == orphans.map { "\(PhotoRepair.removedFolder)/" + $0 } + [
            S3PhotoFileStore.treeKey(id: kept, secret: keptSecret, size: .original),
            try #require(try keys(files).first { $0.hasPrefix("photos/") && $0.hasSuffix("_o.jpg") && $0.contains("/\(lostThumb)_") }),
            "notes.txt", "upload/\(kept)-thumb.jpg", "upload/\(kept).jpg", "upload/\(lostThumb)-thumb.jpg", "upload/\(lostThumb).jpg",
        ].sorted())
        #expect(jpegSize(try #require(try files.client.get("upload/\(lostThumb)-thumb.jpg")))! == (180, 180))
        #expect(try phone.rowCount("photos") == 2)
        #expect(try phone.rowCount("photos_removed") == 1)
        #expect(spools.entries.isEmpty)
        #expect(try repair.run(graceSeconds: 0, actions: .all(), progress: nil).isClean,
                "a second run finds nothing")

        // s3_url naming another (empty) bucket: every row without its photo, nothing changed.
        let wrong = PhotoRepair(files: try store(), photos: MariaDBPhotoStore(database: phone.database),
                                maxImagePixels: 50_000_000, maxDecodeBytes: 256 << 20)
        let refused = try wrong.run(graceSeconds: 0, actions: .all(), progress: nil)
        #expect(refused.refusal?.contains("a wrong s3_url") == true && refused.applied.isEmpty)
        #expect(try phone.rowCount("photos") == 2)
    }
    @Test func aFolderIsCopiedIntoTheBucketOnceAndThenOnlyWhatIsNew() throws {
        let files = try store()
        let uploads = ScratchDirectory("s3-copied-folder")
        let folder = UploadFolder(directory: uploads.path)
        let secret = PhotoSecret.random()
        let thumbnail = makeJPEG(width: 180, height: 180), square = makeJPEG(width: 150, height: 150)
        try folder.publish(photoSpool: uploads.write(".spool-a", photo), thumbnail: thumbnail, id: 2, secret: secret)
        try folder.publish(photoSpool: uploads.write(".spool-b", photo), thumbnail: thumbnail, id: 3, secret: nil)
        try folder.publishSize(square, id: 2, secret: secret, size: .square150)
        _ = uploads.write(".spool-left", photo)
        _ = uploads.write("notes.txt", Array("operator's".utf8))
        let copy = FolderToBucketCopy(folder: folder, bucket: files)

        #expect(try copy.run(progress: nil) == .init(copied: 6, present: 0))
        #expect(try keys(files) == [S3PhotoFileStore.treeKey(id: 2, secret: secret, size: .original),
                                    S3PhotoFileStore.treeKey(id: 2, secret: secret, size: .square150),
                                    "upload/2-thumb.jpg", "upload/2.jpg", "upload/3-thumb.jpg", "upload/3.jpg"])
        #expect(try files.client.get("upload/3.jpg") == photo && files.storedSize(.square150, id: 2, secret: secret) == square)
        #expect(try copy.run(progress: nil) == .init(copied: 0, present: 6), "a second run copies nothing")
        try folder.publish(photoSpool: uploads.write(".spool-c", photo), thumbnail: thumbnail, id: 4, secret: nil)
        #expect(try copy.run(progress: nil) == .init(copied: 2, present: 6), "only the new photo")
        #expect(uploads.entries.contains("2.jpg"), "nothing deleted")
    }
}
}
