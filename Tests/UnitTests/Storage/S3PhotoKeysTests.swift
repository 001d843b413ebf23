import Testing
@testable import IReporterKit

/// The bucket's keys are the photos' URL paths below /iReporter/: what the
/// store writes is what repair recognises, and nothing else.
struct S3PhotoKeysTests {
    @Test func everyKeyTheStoreWritesIsRecognised() throws {
        let secret = try #require(PhotoSecret("0123456789"))
        #expect(S3PhotoFileStore.photoKey(id: 7) == "upload/7.jpg")
        #expect(S3PhotoFileStore.thumbnailKey(id: 7) == "upload/7-thumb.jpg")
        #expect(S3PhotoFileStore.treeKey(id: 1_234_567, secret: secret, size: .original) == "photos/001/234/1234567_0123456789_o.jpg")
        #expect("/iReporter/" + S3PhotoFileStore.treeKey(id: 1_234_567, secret: secret, size: .medium640).replacing("001/234", with: "001234")
                == "/iReporter/" + PhotoTree.urlPath(id: 1_234_567, secret: secret, size: .medium640))
        #expect(S3PhotoFileStore.kind(ofKey: "upload/7.jpg") == .photo(id: 7))
        #expect(S3PhotoFileStore.kind(ofKey: "upload/7-thumb.jpg") == .thumbnail(id: 7))
        for size in PhotoSize.allCases {
            let key = S3PhotoFileStore.treeKey(id: 42, secret: secret, size: size)
            #expect(S3PhotoFileStore.kind(ofKey: key) == .size(id: 42, secret: secret, size: size), "\(key)")
            #expect(S3PhotoFileStore.kind(ofKey: key)?.isOriginal == (size == .original))
        }
    }

    @Test(arguments: ["upload/007.jpg", "upload/7.jpeg", "upload/7-thumb.jpg.bak", "notes.txt", ".removed/upload/7.jpg",
                      "photos/000/001/42_0123456789.jpg", "photos/000000/42_0123456789.jpg", "upload/sub/7.jpg", "upload/.spool-AbCdEf"])
    func otherKeysAreNotPhotos(key: String) {
        #expect(S3PhotoFileStore.kind(ofKey: key) == nil)
    }

    @Test func listingTimesAreReadAsUTC() {
        #expect(S3XML.seconds("1970-01-01T00:00:00.000Z") == 0)
        #expect(S3XML.seconds("2026-12-01T19:40:25.000Z") == 1_796_154_025)
        #expect(S3XML.seconds("yesterday") == nil)
        #expect(S3XML.seconds("99999999999999999-12-01T19:40:25.000Z") == nil, "a year beyond Int32 (it trapped)")
        #expect(S3XML.seconds("2026-13-01T19:40:25.000Z") == nil)
        #expect(S3XML.seconds("2026-12-01T19:40:25+00:00") == nil, "S3 writes Z; another form is not guessed at")
    }
}
