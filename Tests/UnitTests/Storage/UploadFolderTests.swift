#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
@testable import IReporterKit

/// Publishing an upload into the folder: the names it gets, what the web
/// server may read, and nothing left behind, also when it fails.
struct UploadFolderTests {
    let secret = PhotoSecret("0123abcdef")!
    let photo: [UInt8] = Array(repeating: 7, count: 5000)
    let thumbnail: [UInt8] = [1, 2, 3]

    @Test func aPhotoWithASecretGetsItsTreeNameItsLegacyNameAndItsThumbnail() throws {
        let scratch = ScratchDirectory("upload-folder")
        let folder = UploadFolder(directory: scratch.path)
        try folder.publish(photoSpool: scratch.write(".spool-photo", photo), thumbnail: thumbnail, id: 2, secret: secret)

        #expect(scratch.entries == ["2-thumb.jpg", "2.jpg", "photos"])
        let original = folder.tree.path(id: 2, secret: secret, size: .original)
        #expect(inode(original) == inode(folder.photoPath(id: 2)))
        #expect(readFile(folder.photoPath(id: 2)) == photo)
        #expect(readFile(folder.thumbnailPath(id: 2)) == thumbnail)
        for path in [original, folder.thumbnailPath(id: 2)] { #expect(mode(path) == 0o644, "\(path)") }
    }

    @Test func withoutLegacyNamesThePhotoIsInTheTreeAlone() throws {
        let scratch = ScratchDirectory("upload-folder")
        let folder = UploadFolder(directory: scratch.path, legacyNames: false)
        try folder.publish(photoSpool: scratch.write(".spool-photo", photo), thumbnail: thumbnail, id: 3, secret: secret)

        #expect(scratch.entries == ["photos"])
        #expect(readFile(folder.tree.path(id: 3, secret: secret, size: .original)) == photo)
    }

    @Test func aPhotoWithoutASecretKeepsThe2012Layout() throws {
        let scratch = ScratchDirectory("upload-folder")
        let folder = UploadFolder(directory: scratch.path)
        try folder.publish(photoSpool: scratch.write(".spool-photo", photo), thumbnail: thumbnail, id: 4, secret: nil)

        #expect(scratch.entries == ["4-thumb.jpg", "4.jpg"])
        #expect(mode(folder.photoPath(id: 4)) == 0o644)
    }

    @Test func aFailedPublishLeavesNeitherTheThumbnailNorItsSpoolFile() {
        let scratch = ScratchDirectory("upload-folder")
        let folder = UploadFolder(directory: scratch.path)
        #expect(throws: SystemError.self) {
            try folder.publish(photoSpool: "\(scratch.path)/.spool-gone", thumbnail: thumbnail, id: 5, secret: secret)
        }
        #expect(scratch.entries == [])
    }

    @Test func aThumbnailThatCannotTakeItsNameLeavesNoSpoolOfItsOwn() throws {
        let scratch = ScratchDirectory("upload-folder")
        let folder = UploadFolder(directory: scratch.path)
        try #require(mkdir(folder.thumbnailPath(id: 6), 0o755) == 0) // a rename onto a folder fails
        let spool = scratch.write(".spool-photo", photo)
        #expect(throws: SystemError.self) {
            try folder.publish(photoSpool: spool, thumbnail: thumbnail, id: 6, secret: secret)
        }
        #expect(scratch.entries == [".spool-photo", "6-thumb.jpg"], "the upload's own spool is its request's to remove")
    }

    private func inode(_ path: String) -> UInt? {
        var status = stat()
        return stat(path, &status) == 0 ? UInt(status.st_ino) : nil
    }

    private func mode(_ path: String) -> mode_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o7777 : nil
    }
}
