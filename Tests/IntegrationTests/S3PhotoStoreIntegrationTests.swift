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
        settings.timeoutMillis = 1000
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
        S3TestServer.shared.freeze(true)
        defer { S3TestServer.shared.freeze(false) }
        #expect(try phone.body([("command", "upload"), ("title", "down")], file: photo) == Self.unavailable)
        #expect(try phone.body([("command", "stream")]).contains(#""title":"before""#))
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", Self.alicePass)])
                .contains(#""username":"alice""#))
        #expect(try phone.rowCount("photos") == 1, "no row for the photo the store did not take")
        #expect(spools.entries.isEmpty && phone.uploads.entries.isEmpty, "no spool left")
        S3TestServer.shared.freeze(false)
        #expect(try phone.body([("command", "upload"), ("title", "after")], file: photo) == #"{"successful":1}"#)
        #expect(try files.client.get("upload/\(try lastPhotoID(phone)).jpg") != nil)
    }
}
}
