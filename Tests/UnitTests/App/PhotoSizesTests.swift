#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
@testable import IReporterKit

/// A size asked for and not on disk: made once from the best source, written
/// into the tree; a wrong secret or a photo without a row is refused with no
/// decode and nothing written.
struct PhotoSizesTests {
    let scratch = ScratchDirectory("sizes")
    let store = InMemoryPhotoStore(users: .withAlice())
    let folder: UploadFolder
    let sizes: PhotoSizes

    init() {
        folder = UploadFolder(directory: scratch.path)
        sizes = PhotoSizes(photos: store, files: folder, policy: AppServices.Policy(), decodeGate: nil)
    }

    /// A 1600x1200 photo published as an upload publishes it.
    func upload(secret: PhotoSecret?) throws -> Int64 {
        let spool = scratch.write(".spool-test", makeJPEG(width: 1600, height: 1200))
        return try store.add(userID: 1, title: Array("t".utf8), details: nil, secret: secret, publish: { id, secret in
            try folder.publish(photoSpool: spool, thumbnail: makeJPEG(width: 180, height: 180), id: id, secret: secret)
        }, unpublish: { folder.remove(id: $0, secret: secret) })
    }

    func treeFiles(_ id: Int64) -> [String] { folder.tree.files(of: id) }

    @Test func anUploadIsInTheTreeUnderItsSecretAndItsOldNameAlike() throws {
        let secret = PhotoSecret.random()
        let id = try upload(secret: secret)
        #expect(treeFiles(id) == ["\(id)_\(secret)_o.jpg"])
        var inTree = stat(), legacy = stat()
        stat(folder.tree.path(id: id, secret: secret, size: .original), &inTree)
        stat(folder.photoPath(id: id), &legacy)
        #expect(inTree.st_ino == legacy.st_ino && inTree.st_nlink == 2, "one file, two names")
    }

    @Test func withoutTheOldNamesAnUploadIsInTheTreeAlone() throws {
        let secret = PhotoSecret.random()
        let spool = scratch.write(".spool-test", makeJPEG(width: 64, height: 48))
        let id = try store.add(userID: 1, title: Array("t".utf8), details: nil, secret: secret, publish: { id, secret in
            try UploadFolder(directory: scratch.path, legacyNames: false)
                .publish(photoSpool: spool, thumbnail: makeJPEG(width: 180, height: 180), id: id, secret: secret)
        }, unpublish: { folder.remove(id: $0, secret: secret) })
        #expect(scratch.entries == ["photos"] && treeFiles(id) == ["\(id)_\(secret)_o.jpg"])
        guard case .found(let q) = sizes.size(.square150, id: id, secret: secret) else { Issue.record("no q"); return }
        #expect(jpegSize(q)! == (48, 48), "never enlarged")
    }

    @Test func aMissingSizeIsRenderedOnceAndKept() throws {
        let secret = PhotoSecret.random()
        let id = try upload(secret: secret)
        guard case .found(let z) = sizes.size(.medium640, id: id, secret: secret) else { Issue.record("no z"); return }
        #expect(jpegSize(z)! == (640, 480))
        guard case .found(let q) = sizes.size(.square150, id: id, secret: secret) else { Issue.record("no q"); return }
        #expect(jpegSize(q)! == (150, 150))
        #expect(treeFiles(id) == ["\(id)_\(secret)_o.jpg", "\(id)_\(secret)_q.jpg", "\(id)_\(secret)_z.jpg"])
        #expect(readFile(folder.tree.path(id: id, secret: secret, size: .medium640)) == z)
        // `t` comes from `z`, the smallest larger box already there.
        #expect(folder.source(for: .thumbnail, id: id, secret: secret) == folder.tree.path(id: id, secret: secret, size: .medium640))
        guard case .found(let t) = sizes.size(.thumbnail, id: id, secret: secret) else { Issue.record("no t"); return }
        #expect(jpegSize(t)! == (100, 75))
        #expect(scratch.entries.filter { $0.hasPrefix(".spool-") }.isEmpty, "no temporary file left")
    }

    @Test func aWrongSecretOrNoRowIsNotFoundAndNothingIsWritten() throws {
        let secret = PhotoSecret.random()
        let id = try upload(secret: secret)
        let other = PhotoSecret(secret.description == "0000000000" ? "0000000001" : "0000000000")!
        for (photo, asked) in [(id, other), (id + 1, secret), (id + 1, other)] {
            guard case .notFound = sizes.size(.medium640, id: photo, secret: asked) else {
                Issue.record("\(photo) \(asked) was answered"); continue
            }
        }
        #expect(treeFiles(id) == ["\(id)_\(secret)_o.jpg"])
        #expect(scratch.entries.sorted() == ["\(id)-thumb.jpg", "\(id).jpg", "photos"])
    }

    @Test func aPhotoStoredBeforeTheTreeGetsItsSizesAndItsOriginalThere() throws {
        let id = try upload(secret: nil)  // the PHP version's upload
        #expect(treeFiles(id).isEmpty)
        let secret = try #require(try store.secrets(ids: [id])[id], "given a secret when first asked")
        guard case .found(let b) = sizes.size(.large, id: id, secret: secret) else { Issue.record("no b"); return }
        #expect(jpegSize(b)! == (1024, 768))
        guard case .found(let o) = sizes.size(.original, id: id, secret: secret) else { Issue.record("no o"); return }
        #expect(o == readFile(folder.photoPath(id: id)))
        #expect(treeFiles(id) == ["\(id)_\(secret)_b.jpg", "\(id)_\(secret)_o.jpg"])
    }

    @Test func discardRemovesTheOldNamesAndEverySize() throws {
        let secret = PhotoSecret.random()
        let id = try upload(secret: secret)
        _ = sizes.size(.small240, id: id, secret: secret)
        try folder.discard(id: id)
        #expect(treeFiles(id).isEmpty)
        #expect(scratch.entries == ["photos"])
    }

    @Test func aPhotoWhoseOriginalIsGoneIsNotFound() throws {
        let secret = PhotoSecret.random()
        let id = try upload(secret: secret)
        unlink(folder.tree.path(id: id, secret: secret, size: .original))
        unlink(folder.photoPath(id: id))
        for size in [PhotoSize.square150, .large, .original] {
            guard case .notFound = sizes.size(size, id: id, secret: secret) else { Issue.record("\(size) answered"); continue }
        }
        #expect(treeFiles(id).isEmpty && scratch.entries.sorted() == ["\(id)-thumb.jpg", "photos"])
    }

    /// What a lost original is logged once by: the last ids seen, no more.
    /// A photo the PHP version stored (at its 2012 name alone, checked by no one).
    func storedByPHP(_ bytes: [UInt8], secret: PhotoSecret) throws -> Int64 {
        try store.add(userID: 1, title: Array("t".utf8), details: nil, secret: secret, publish: { id, _ in
            _ = scratch.write("\(id).jpg", bytes)
        }, unpublish: { _ in })
    }

    /// libjpeg's warnings (here "extraneous bytes before marker 0xd9", as
    /// some cameras write) are decoded through, as PHP's GD does; an
    /// upload of the same file is refused (`ImagingTests`).
    @Test func aStoredPhotoWithLibjpegsWarningsHasItsSizes() throws {
        let secret = PhotoSecret.random()
        let jpeg = makeJPEG(width: 320, height: 240)
        let id = try storedByPHP(Array(jpeg.dropLast(2)) + Array(repeating: 0x20, count: 100) + [0xFF, 0xD9], secret: secret)
        #expect(throws: JPEGImageError.self) { try Thumbnailer().thumbnailJPEG(ofFileAt: folder.photoPath(id: id), maxPixels: 0) }
        guard case .found(let q) = sizes.size(.square150, id: id, secret: secret) else { Issue.record("no q"); return }
        #expect(jpegSize(q)! == (150, 150))
    }

    /// A PNG the PHP version stored as `<id>.jpg`: its sizes are JPEGs
    /// made of it, kept as any size is (a 500 at every request before).
    @Test func aStoredPNGHasItsSizes() throws {
        let secret = PhotoSecret.random()
        let id = try storedByPHP(makePNG(width: 400, height: 300), secret: secret)
        guard case .found(let q) = sizes.size(.square150, id: id, secret: secret) else { Issue.record("no q"); return }
        #expect(jpegSize(q)! == (150, 150))
        #expect(treeFiles(id) == ["\(id)_\(secret)_q.jpg"])
        #expect(scratch.entries.filter { $0.hasPrefix(".spool-") }.isEmpty, "no temporary file left")
    }

    /// No size can be made of it (text, or a PNG past max_image_pixels): a
    /// 404, the same at every request, not a 500 "try again".
    @Test func aStoredFileNoSizeCanBeMadeOfIsNotFound() throws {
        let secret = PhotoSecret.random()
        let text = try storedByPHP(Array("not a photo".utf8), secret: secret)
        guard case .notFound = sizes.size(.square150, id: text, secret: secret) else { Issue.record("text answered"); return }
        var small = AppServices.Policy()
        small.maxImagePixels = 100
        let strict = PhotoSizes(photos: store, files: folder, policy: small, decodeGate: nil)
        let large = try storedByPHP(makePNG(width: 40, height: 30), secret: secret)
        guard case .notFound = strict.size(.square150, id: large, secret: secret) else { Issue.record("a PNG past the limit answered"); return }
    }

    @Test func recentIDsSayNewOnceAndForgetTheOldestPastTheirCapacity() {
        var seen = RecentIDs(capacity: 3)
        let answers = [1, 2, 1, 3, 2, 4, 1, 3, 4, 2].map { seen.insert($0) }
        // 4 makes 1 the one forgotten; 1 back makes it 2; 3 and 4 are still kept.
        #expect(answers == [true, true, false, true, false, true, true, false, false, true])
    }
}
