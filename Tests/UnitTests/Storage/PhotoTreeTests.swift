#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
@testable import IReporterKit

/// The photos' tree: where each size of a photo lives, what a size URL may
/// look like, and what is refused.
struct PhotoTreeTests {
    let secret = PhotoSecret("0123abcdef")!

    @Test func aThousandPhotosPerLeafAndAThousandLeavesPerFolder() {
        let tree = PhotoTree(uploadDirectory: "/u")
        #expect(PhotoTree.server(of: 2) == "000000")
        #expect(tree.folder(of: 999) == "/u/photos/000/000")
        #expect(tree.folder(of: 1000) == "/u/photos/000/001")
        #expect(tree.folder(of: 1_234_567) == "/u/photos/001/234")
        #expect(tree.folder(of: 2_147_483_647) == "/u/photos/2147/483")
        #expect(tree.path(id: 1_234_567, secret: secret, size: .square150) == "/u/photos/001/234/1234567_0123abcdef_q.jpg")
        #expect(tree.path(id: 5, secret: secret, size: .medium) == "/u/photos/000/000/5_0123abcdef.jpg")
        #expect(PhotoTree.urlPath(id: 1_234_567, secret: secret, size: .original) == "photos/001234/1234567_0123abcdef_o.jpg")
    }

    @Test func everySizeURLParsesBackToItsPhoto() {
        for size in PhotoSize.allCases {
            let path = "/iReporter/" + PhotoTree.urlPath(id: 1_234_567, secret: secret, size: size)
            let parsed = PhotoTree.parse(urlPath: path[...])
            #expect(parsed?.id == 1_234_567 && parsed?.secret == secret && parsed?.size == size, "\(path)")
        }
    }

    @Test(arguments: [
        "/iReporter/photos/000000/2_0123abcdef_x.jpg",       // not a size letter
        "/iReporter/photos/000000/2_0123abcdef_.jpg",
        "/iReporter/photos/000000/2_0123abcdef_qq.jpg",
        "/iReporter/photos/000000/2_0123ABCDEF_q.jpg",       // the secret's spelling is ours
        "/iReporter/photos/000000/2_0123abcde_q.jpg",        // one digit short
        "/iReporter/photos/000000/2_0123abcdef_q.png",
        "/iReporter/photos/000000/02_0123abcdef_q.jpg",      // another spelling of the id
        "/iReporter/photos/000000/x_0123abcdef_q.jpg",       // not a number
        "/iReporter/photos/000000/-2_0123abcdef_q.jpg",
        "/iReporter/photos/000000/0_0123abcdef_q.jpg",
        "/iReporter/photos/000000/99999999999_0123abcdef_q.jpg",
        "/iReporter/photos/000001/2_0123abcdef_q.jpg",       // another photo's server
        "/iReporter/photos/000000/../2_0123abcdef_q.jpg",
        "/iReporter/photos/%2e%2e/000000/2_0123abcdef_q.jpg",
        "/iReporter/photos/000000/2_0123abcdef_q.jpg%00.txt",
        "/iReporter/photos/000000/2_0123abcdef%5fq.jpg",
        "/iReporter/photos/000000/2_0123abcdef_q.jpg/",
        "/iReporter/photos/000000//2_0123abcdef_q.jpg",
        "/iReporter/upload/000000/2_0123abcdef_q.jpg",
        "/iReporter/photos/000000/2_0123abcdef_q_q.jpg",
    ])
    func anythingElseIsRefused(_ path: String) {
        #expect(PhotoTree.parse(urlPath: path[...]) == nil)
    }

    /// Flickr's clients build `/<server>/<id>_<secret>[_<letter>].jpg`
    /// from the answer's fields, the server read as a number.
    @Test func flickrsFormOfTheURLParsesInAnyPaddingOfItsServer() {
        for (path, id, size) in [("/0/2_0123abcdef_m.jpg", Int64(2), PhotoSize.small240),
                                 ("/000000/2_0123abcdef.jpg", 2, .medium),
                                 ("/1234/1234567_0123abcdef_q.jpg", 1_234_567, .square150),
                                 ("/001234/1234567_0123abcdef_o.jpg", 1_234_567, .original)] {
            let parsed = PhotoTree.parse(flickrPath: path[...])
            #expect(parsed?.id == id && parsed?.secret == secret && parsed?.size == size, "\(path)")
        }
        for path in ["/1/2_0123abcdef_m.jpg", "/0/02_0123abcdef_m.jpg", "/00000000000/2_0123abcdef_m.jpg",
                     "//0/2_0123abcdef_m.jpg", "/0/2_0123abcdef_m.jpg/", "/x/2_0123abcdef_m.jpg", "/-0/2_0123abcdef_m.jpg",
                     "/iReporter/0/2_0123abcdef_m.jpg", "0/2_0123abcdef_m.jpg", "/0/2_0123abcdef_x.jpg"] {
            #expect(PhotoTree.parse(flickrPath: path[...]) == nil, "\(path)")
        }
    }

    @Test func aVeryLongNameIsRefusedUnread() {
        let path = "/iReporter/photos/000000/2_0123abcdef_q.jpg" + String(repeating: "/", count: 10_000)
        #expect(PhotoTree.parse(urlPath: path[...]) == nil)
    }

    @Test func aSecretIsTenLowercaseHexDigitsAndRandom() {
        let secrets = (0..<100).map { _ in PhotoSecret.random() }
        #expect(secrets.allSatisfy { PhotoSecret($0.description) == $0 })
        #expect(Set(secrets).count == 100)
        #expect(PhotoSecret("0123abcdeg") == nil && PhotoSecret("0123abcdef0") == nil)
    }

    @Test func sizesKeepTheProportionsAndNeverEnlarge() {
        #expect(PhotoSize.square75.dimensions(ofPhoto: 4000, 3000) == (75, 75))
        #expect(PhotoSize.square150.dimensions(ofPhoto: 120, 300) == (120, 120))
        #expect(PhotoSize.medium640.dimensions(ofPhoto: 4000, 3000) == (640, 480))
        #expect(PhotoSize.large.dimensions(ofPhoto: 3000, 4000) == (768, 1024))
        #expect(PhotoSize.medium.dimensions(ofPhoto: 400, 300) == (400, 300))
        #expect(PhotoSize.thumbnail.dimensions(ofPhoto: 1000, 1) == (100, 1))
        #expect(PhotoSize.original.dimensions(ofPhoto: 4000, 3000) == (4000, 3000))
    }

    @Test func discardRemovesEverySizeOfThePhotoAndNoOtherPhotos() throws {
        let scratch = ScratchDirectory("tree")
        let tree = PhotoTree(uploadDirectory: scratch.path)
        try tree.makeFolder(of: 2)
        for name in ["2_0123abcdef_o.jpg", "2_0123abcdef_q.jpg", "2_0123abcdef.jpg", "2_ffffffffff_z.jpg",
                     "20_0123abcdef_o.jpg", "2-thumb.jpg"] {
            scratch.write("photos/000/000/\(name)", [1])
        }
        try tree.discard(id: 2)
        #expect(try ScratchDirectory.names(in: tree.folder(of: 2)) == ["2-thumb.jpg", "20_0123abcdef_o.jpg"])
    }
}
