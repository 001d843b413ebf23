#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// The size route against `delete` and a lost original, on the real
/// database and the real folder: the owner's `delete` (the API's command)
/// is run at a chosen step of a size being made, so the race is the same
/// every time; what must hold is that nothing of the photo is left on disk
/// and the answer is a 404, never a 500.
extension DatabaseTests {
    @Suite struct PhotoSizeDeleteIntegrationTests {
        let photo = makeJPEG(width: 1600, height: 1200)

        /// The steps at which the photo is deleted.
        enum Step { case underTheDecoder, beforePlacing, beforeLinkingTheOriginal }

        /// The photo store (the folder, or a bucket), with the owner's `delete` run once at `step`.
        final class DeletingMeanwhile: PhotoSizeFiles {
            let folder: any PhotoSizeFiles
            let step: Step
            let delete: () throws -> Void
            var deleted = false
            var spoolDirectory: String { folder.spoolDirectory }

            init(_ folder: any PhotoSizeFiles, at step: Step, _ delete: @escaping () throws -> Void) {
                (self.folder, self.step, self.delete) = (folder, step, delete)
            }

            private func deleting(at now: Step) throws {
                guard now == step, !deleted else { return }
                deleted = true
                try delete()
            }

            func storedSize(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws -> [UInt8]? {
                try folder.storedSize(size, id: id, secret: secret)
            }

            func originalInTree(id: Int64, secret: PhotoSecret) throws -> [UInt8]? {
                try deleting(at: .beforeLinkingTheOriginal)
                return try folder.originalInTree(id: id, secret: secret)
            }

            func withSource<Result>(for size: PhotoSize, id: Int64, secret: PhotoSecret,
                                    _ render: (String) throws -> Result) throws -> Result? {
                try folder.withSource(for: size, id: id, secret: secret) { path in
                    try deleting(at: .underTheDecoder)
                    return try render(path)
                }
            }

            func publishSize(_ jpeg: [UInt8], id: Int64, secret: PhotoSecret, size: PhotoSize) throws {
                try deleting(at: .beforePlacing)
                try folder.publishSize(jpeg, id: id, secret: secret, size: size)
            }

            func removeSize(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws {
                try folder.removeSize(size, id: id, secret: secret)
            }
        }

        /// alice's photo 2 (or, `storedBeforeTheTree`, one under its 2012 name alone, as the PHP version stores it).
        func uploaded(storedBeforeTheTree: Bool = false) throws -> (APIHarness, MariaDBPhotoStore, PhotoSecret) {
            let phone = try APIHarness()
            _ = try phone.send([("command", "register"), ("username", "alice"), ("password", "x")])
            #expect(try phone.body([("command", "upload"), ("title", "pier")], file: photo) == #"{"successful":1}"#)
            let store = MariaDBPhotoStore(database: phone.database)
            let secret = try #require(try store.secret(of: 2))
            if storedBeforeTheTree { unlink(UploadFolder(directory: phone.uploads.path).tree.path(id: 2, secret: secret, size: .original)) }
            return (phone, store, secret)
        }

        func filesOfPhoto2(_ phone: APIHarness) -> [String] {
            let folder = UploadFolder(directory: phone.uploads.path)
            return folder.tree.files(of: 2) + phone.uploads.entries.filter { $0.hasPrefix("2.") || $0.hasPrefix("2-") }
        }

        @Test(arguments: [(Step.underTheDecoder, PhotoSize.large), (.beforePlacing, .large), (.beforePlacing, .square150),
                          (.beforeLinkingTheOriginal, .original)])
        func aDeleteWhileASizeIsMadeWinsAndLeavesNothing(step: Step, size: PhotoSize) throws {
            let (phone, store, secret) = try uploaded(storedBeforeTheTree: step == .beforeLinkingTheOriginal)
            let files = DeletingMeanwhile(UploadFolder(directory: phone.uploads.path), at: step) { () throws -> Void in
                let answer = try phone.body([("command", "delete"), ("IdPhoto", "2")])
                #expect(answer == #"{"successful":1}"#)
            }
            let sizes = PhotoSizes(photos: store, files: files, policy: AppServices.Policy(), decodeGate: nil)
            let outcome = sizes.size(size, id: 2, secret: secret)
            #expect(files.deleted)
            guard case .notFound = outcome else { Issue.record("answered \(outcome) for a deleted photo"); return }
            #expect(filesOfPhoto2(phone).isEmpty, "nothing of the photo outlives its delete")
            #expect(phone.uploads.entries.filter { $0.hasPrefix(".spool-") }.isEmpty)
        }

        @Test func aSizeMadeBeforeTheDeleteIsTheDeletesToRemove() throws {
            let (phone, store, secret) = try uploaded()
            let sizes = PhotoSizes(photos: store, files: UploadFolder(directory: phone.uploads.path), policy: AppServices.Policy(),
                                   decodeGate: nil)
            guard case .found = sizes.size(.large, id: 2, secret: secret) else { Issue.record("no b"); return }
            #expect(try phone.body([("command", "delete"), ("IdPhoto", "2")]) == #"{"successful":1}"#)
            #expect(filesOfPhoto2(phone).isEmpty)
            guard case .notFound = sizes.size(.large, id: 2, secret: secret) else { Issue.record("b after the delete"); return }
        }

        /// Its original gone under both names (a disk restored without it, an
        /// operator's mistake): its sizes are 404s, as for no photo, and
        /// `repair` lists it and changes nothing of it, `--yes` or not.
        @Test func aPhotoWhoseOriginalIsGoneIsNotFoundAndRepairListsItWithoutSettingItAside() throws {
            let (phone, store, secret) = try uploaded()
            #expect(try phone.body([("command", "upload"), ("title", "never stored")], file: photo) == #"{"successful":1}"#) // 3
            let folder = UploadFolder(directory: phone.uploads.path)
            let sizes = PhotoSizes(photos: store, files: folder, policy: AppServices.Policy(), decodeGate: nil)
            guard case .found = sizes.size(.medium640, id: 2, secret: secret) else { Issue.record("no z"); return }
            unlink(folder.tree.path(id: 2, secret: secret, size: .original))
            unlink(folder.photoPath(id: 2))
            for size in [PhotoSize.large, .square150, .original] {
                guard case .notFound = sizes.size(size, id: 2, secret: secret) else { Issue.record("\(size) answered"); continue }
            }
            guard case .found = sizes.size(.medium640, id: 2, secret: secret) else { Issue.record("the z made before is kept"); return }
            #expect(folder.tree.files(of: 2) == ["2_\(secret)_z.jpg"], "nothing written for a lost original")
            // 3 lost everything: a row whose files never came, as repair always set aside.
            let secret3 = try #require(try store.secret(of: 3))
            unlink(folder.tree.path(id: 3, secret: secret3, size: .original))
            unlink(folder.photoPath(id: 3))
            unlink(folder.thumbnailPath(id: 3))

            let repair = PhotoRepair(files: folder, photos: store, maxImagePixels: 50_000_000)
            let dry = try repair.run(graceSeconds: 0, actions: .dryRun)
            #expect(dry.lostOriginals == [2] && dry.rowsWithoutPhoto == [3] && !dry.isClean, "\(dry.summary)")
            #expect(dry.summary.hasSuffix("1 photos whose original is gone (kept: only a backup restores them)"), "\(dry.summary)")
            let yes = try repair.run(graceSeconds: 0, actions: .all(force: true))
            #expect(yes.lostOriginals == [2] && yes.misnamed.isEmpty && yes.applied.contains(.rows), "\(yes.summary)")
            #expect(try store.existing([2, 3]) == [2] && phone.rowCount("photos_removed") == 1, "the lost photo's row is kept, 3's set aside")
            #expect(folder.tree.files(of: 2) == ["2_\(secret)_z.jpg"] && phone.uploads.entries.contains("2-thumb.jpg"))
            #expect(try repair.run(graceSeconds: 0, actions: .all()).lostOriginals == [2],
                    "listed at every run until a backup restores it")
        }
    }
}
