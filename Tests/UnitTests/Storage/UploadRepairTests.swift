#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
@testable import IReporterKit

/// Repair's judgement, on a scratch folder and rows in memory: a consistent
/// view while uploads commit, and no destruction when the damage looks like
/// a wrong path or database.
struct UploadRepairTests {
    let folder = ScratchDirectory("repair")
    let photo = makeJPEG(width: 64, height: 48)
    let everything = PhotoRepair.Actions.all()

    /// Rows 2...(1 + count), each with its photo and thumbnail.
    func photos(_ count: Int) throws -> InMemoryPhotoStore {
        let store = InMemoryPhotoStore(users: .withAlice())
        for _ in 0..<count { try upload(to: store) }
        return store
    }

    /// What an upload does: the files, then the row.
    @discardableResult
    func upload(to store: InMemoryPhotoStore) throws -> Int64 {
        try store.add(userID: 1, title: Array("t".utf8), publish: { id in
            folder.write("\(id).jpg", photo)
            folder.write("\(id)-thumb.jpg", photo)
        }, unpublish: { _ in })
    }

    func repair(_ store: any PhotoStore) -> PhotoRepair {
        PhotoRepair(files: UploadFolder(directory: folder.path), photos: store, maxImagePixels: 1_000_000)
    }

    @Test func anUploadCommittingDuringTheRunIsNeitherMissingNorDebris() throws {
        // An upload commits right after repair has read the rows, before it
        // lists the folder: its files are there, its row came too late.
        let store = try photos(20)
        let meanwhile = PhotoStoreMeanwhile(store)
        meanwhile.afterReadingIDs = { ids in if ids.isEmpty { try upload(to: store) } }
        // Grace 0: only the second look keeps the new photo's files from being called debris.
        let report = try repair(meanwhile).run(graceSeconds: 0, actions: everything)
        #expect(report.rowsWithoutPhoto.isEmpty && report.filesWithoutRow.isEmpty, "\(report.summary)")
        #expect(store.rows.count == 21 && store.removed.isEmpty)
    }

    @Test func withoutYesOnlyTheSafeStepsAreTaken() throws {
        let store = try photos(10)
        folder.write(".spool-AbCdEf", photo)
        folder.write("99.jpg", photo)
        unlink("\(folder.path)/5.jpg")
        unlink("\(folder.path)/6-thumb.jpg")
        let shown = try repair(store).run(graceSeconds: 0, actions: .init())
        #expect(shown.spools == [".spool-AbCdEf"] && shown.missingThumbnails == [6])
        #expect(shown.filesWithoutRow == ["99.jpg"] && shown.rowsWithoutPhoto == [5])
        #expect(shown.applied == [.spools, .thumbnails, .sizes, .names] && shown.refusal == nil)
        #expect(folder.entries.contains("99.jpg") && folder.entries.contains("6-thumb.jpg") && store.rows.count == 10)

        let done = try repair(store).run(graceSeconds: 0, actions: everything)
        #expect(done.applied == [.spools, .thumbnails, .reactions, .files, .rows, .sizes, .names])
        #expect(store.removed.map(\.id) == [5] && store.rows.count == 9)
        #expect(try ScratchDirectory.names(in: "\(folder.path)/.removed") == ["5-thumb.jpg", "99.jpg"])
    }

    @Test func mostRowsWithoutTheirFilesLooksLikeAWrongPath() throws {
        let store = try photos(10)
        for id in 2...7 { unlink("\(folder.path)/\(id).jpg") }
        let report = try repair(store).run(graceSeconds: 0, actions: everything)
        #expect(report.rowsWithoutPhoto.count == 6 && report.applied.isEmpty)
        #expect(report.refusal?.contains("6 of the 10 rows have no photo file") == true)
        #expect(store.rows.count == 10)
        #expect(try repair(store).run(graceSeconds: 0, actions: .init(setAsideRows: true, force: true)).applied.contains(.rows))
        #expect(store.rows.count == 4)
    }

    @Test func anotherDeviceThanLastTimeIsRefused() throws {
        let store = try photos(4)
        #expect(try repair(store).run(graceSeconds: 0, actions: everything).refusal == nil)
        #expect(folder.entries.contains(UploadFolder.deviceMarker), "the healthy folder's device is recorded")
        folder.write(UploadFolder.deviceMarker, Array("12345\n".utf8))
        unlink("\(folder.path)/2.jpg")
        let report = try repair(store).run(graceSeconds: 0, actions: everything)
        #expect(report.refusal?.contains("on another device") == true && store.rows.count == 4)
    }

    /// A bucket as repair sees it, in memory: the keys' ages are the
    /// listing's, photos are never renamed.
    final class BucketInMemory: RepairablePhotoStore {
        var objects: [String: Int]
        var setAside: [String] = []
        let spoolDirectory: String
        let legacyNames = true
        init(objects: [String: Int], spools: String) { (self.objects, spoolDirectory) = (objects, spools) }

        var place: String { "http://127.0.0.1:1/bucket" }
        var placeSetting: String { "s3_url" }
        func forEachPhotoFile(_ body: (StoredPhotoFile) -> Void) {
            for (key, modified) in objects {
                if let kind = S3PhotoFileStore.kind(ofKey: key) { body(StoredPhotoFile(path: key, kind: kind, listedModified: modified)) }
            }
        }
        func modified(_ file: StoredPhotoFile) -> Int? { file.listedModified }
        func hasOriginal(id: Int64) -> Bool { objects["upload/\(id).jpg"] != nil }
        func makeThumbnail(id: Int64, _ render: (String) -> [UInt8]?) -> Bool {
            objects["upload/\(id)-thumb.jpg"] = Int(time(nil))
            return true
        }
        func legacyThumbnail(id: Int64) -> String? { objects["upload/\(id)-thumb.jpg"] == nil ? nil : "upload/\(id)-thumb.jpg" }
        func remove(_ path: String) { objects[path] = nil }
        func setAside(_ path: String) {
            objects[path] = nil
            setAside.append(path)
        }
        func isMisnamed(id: Int64, secret: PhotoSecret) -> Bool { false }
        func relink(id: Int64, secret: PhotoSecret, _ render: (String) -> [UInt8]?) {}
        func changeSinceHealthy() -> String? { nil }
        func prepare() {}
        func recordHealthy() {}
    }

    @Test func theSameStepsRunOnAnyStoreByItsListedAges() throws {
        let store = InMemoryPhotoStore(users: .withAlice())
        var objects: [String: Int] = [:]
        for _ in 0..<10 {
            let id = try store.add(userID: 1, title: Array("t".utf8), publish: { _ in }, unpublish: { _ in })
            (objects["upload/\(id).jpg"], objects["upload/\(id)-thumb.jpg"]) = (0, 0)
        }
        objects["upload/5.jpg"] = nil
        objects["upload/6-thumb.jpg"] = nil
        objects["upload/99.jpg"] = 0
        objects["upload/98.jpg"] = Int(time(nil)) // an upload committing: younger than the grace time
        objects["notes.txt"] = 0
        let bucket = BucketInMemory(objects: objects, spools: folder.path)
        let report = try PhotoRepair(files: bucket, photos: store, maxImagePixels: 1_000_000).run(graceSeconds: 600, actions: everything)
        #expect(report.filesWithoutRow == ["upload/99.jpg"] && report.rowsWithoutPhoto == [5] && report.missingThumbnails == [6])
        #expect(report.applied == [.spools, .thumbnails, .reactions, .files, .rows, .sizes, .names] && report.misnamed.isEmpty)
        #expect(bucket.setAside == ["upload/99.jpg", "upload/5-thumb.jpg"])
        #expect(bucket.objects["upload/98.jpg"] != nil && bucket.objects["notes.txt"] != nil && bucket.objects["upload/6-thumb.jpg"] != nil)
        #expect(store.removed.map(\.id) == [5] && store.rows.count == 9)
    }

    @Test func onlyTheServersOwnNamesAreItsFiles() {
        #expect(UploadFolder.photoFile("12.jpg")! == (12, false))
        #expect(UploadFolder.photoFile("12-thumb.jpg")! == (12, true))
        for name in ["012.jpg", "+12.jpg", "0.jpg", "12.jpeg", "x-thumb.jpg", ".spool-1.jpg"] {
            #expect(UploadFolder.photoFile(name) == nil, "\(name)")
        }
    }
}
