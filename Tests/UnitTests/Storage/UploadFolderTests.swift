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

    /// `ireporter check` looks at the owners of the first files only (at
    /// every start, under systemd): the listing stops there, the tree unread.
    @Test func aScanOfThePhotoFilesStopsWhereItsCallerDoes() throws {
        let scratch = ScratchDirectory("upload-folder")
        let folder = UploadFolder(directory: scratch.path)
        for id in 1...3 { try folder.publish(photoSpool: scratch.write(".spool-\(id)", photo), thumbnail: thumbnail, id: Int64(id), secret: secret) }

        var all: [String] = []
        try folder.forEachPhotoFile { all.append($0.path) }
        #expect(all.count == 9, "three 2012 photos, their thumbnails, their originals in the tree")
        #expect(all.suffix(3).allSatisfy { $0.hasPrefix("\(PhotoTree.folderName)/") }, "the tree after the 2012 names")

        var seen: [String] = []
        try folder.scanPhotoFiles { file in
            seen.append(file.path)
            return seen.count < 2
        }
        #expect(seen == Array(all.prefix(2)))
        seen = []
        try folder.scanPhotoFiles { file in
            seen.append(file.path)
            return seen.count < 7
        }
        #expect(seen == Array(all.prefix(7)), "stopped in the tree")
    }
}

/// An upload given the id of a photo whose files are still in the folder
/// (a database restored from a backup older than the folder): that earlier
/// photo is set aside into `.removed/`, never replaced or deleted.
struct EarlierPhotoAtAnIDTests {
    let scratch = ScratchDirectory("upload-earlier")
    let folder: UploadFolder
    let newSecret = PhotoSecret("0123abcdef")!
    let oldSecret = PhotoSecret("fedcba9876")!

    init() { folder = UploadFolder(directory: scratch.path) }

    var removed: [String] {
        (try? ScratchDirectory.names(in: "\(scratch.path)/.removed")) ?? []
    }

    @Test func anEarlierPhotosFilesAreSetAsideWhole() throws {
        let leaf = "photos/\(PhotoTree.leaf(of: 7))"
        try folder.tree.makeFolder(of: 7)
        _ = scratch.write("7.jpg", Array("old photo".utf8))
        _ = scratch.write("7-thumb.jpg", Array("old thumbnail".utf8))
        _ = scratch.write("\(leaf)/7_\(oldSecret).jpg", Array("old photo".utf8))
        _ = scratch.write("\(leaf)/7_\(oldSecret)_q.jpg", Array("old square".utf8))
        try folder.publish(photoSpool: scratch.write(".spool-photo", Array("new photo".utf8)), thumbnail: [1], id: 7, secret: newSecret)

        #expect(readFile(folder.photoPath(id: 7)) == Array("new photo".utf8))
        #expect(readFile(folder.thumbnailPath(id: 7)) == [1])
        #expect(folder.tree.files(of: 7) == ["7_\(newSecret)_o.jpg"])
        #expect(removed == ["7-thumb.jpg", "7.jpg", "7_\(oldSecret).jpg", "7_\(oldSecret)_q.jpg"])
        #expect(readFile("\(scratch.path)/.removed/7.jpg") == Array("old photo".utf8))
    }

    /// Found at the 2012 name only after the thumbnail and the tree's
    /// original were placed: those are this upload's, and stay.
    @Test func whatTheUploadPlacedStays() throws {
        _ = scratch.write("8.jpg", Array("old photo".utf8))
        try folder.publish(photoSpool: scratch.write(".spool-photo", Array("new photo".utf8)), thumbnail: [2], id: 8, secret: newSecret)
        #expect(removed == ["8.jpg"])
        #expect(readFile(folder.thumbnailPath(id: 8)) == [2])
        #expect(readFile(folder.tree.path(id: 8, secret: newSecret, size: .original)) == Array("new photo".utf8))
        #expect(readFile(folder.photoPath(id: 8)) == Array("new photo".utf8))
    }

    @Test func withoutASecretToo() throws {
        _ = scratch.write("9.jpg", Array("old photo".utf8))
        try folder.publish(photoSpool: scratch.write(".spool-photo", Array("new photo".utf8)), thumbnail: [3], id: 9, secret: nil)
        #expect(removed == ["9.jpg"])
        #expect(readFile(folder.photoPath(id: 9)) == Array("new photo".utf8))
    }

    /// A row that did not commit takes its own files, not an earlier
    /// photo's sizes under another secret.
    @Test func anUploadUndoneTakesOnlyItsOwnFiles() throws {
        try folder.tree.makeFolder(of: 10)
        let older = "photos/\(PhotoTree.leaf(of: 10))/10_\(oldSecret)_q.jpg"
        _ = scratch.write(older, [9])
        try folder.publish(photoSpool: scratch.write(".spool-photo", [4]), thumbnail: [5], id: 10, secret: newSecret)
        folder.remove(id: 10, secret: newSecret)
        #expect(folder.tree.files(of: 10) == ["10_\(oldSecret)_q.jpg"])
        #expect(scratch.entries.filter { $0.hasPrefix("10") }.isEmpty)
    }

    /// Two files of one name set aside: the second beside the first
    /// (a tree file's copy once went to a folder `.removed/` has not).
    @Test func aSecondFileOfTheSameNameIsSetAsideBesideTheFirst() throws {
        try folder.tree.makeFolder(of: 11)
        for _ in 0..<2 {
            let name = "photos/\(PhotoTree.leaf(of: 11))/11_\(oldSecret).jpg"
            _ = scratch.write(name, [6])
            try folder.setAside(name)
        }
        #expect(removed == ["11_\(oldSecret).jpg", "11_\(oldSecret).jpg.2"])
    }
}
