import Testing
@testable import IReporterKit

struct S3SettingsTests {
    @Test func theURLCarriesEndpointBucketKeyAndRegion() throws {
        let settings = try S3Settings(url: "http://AKIA123:se%2Fcr%2Bet@127.0.0.1:9000/photos?region=eu-west-3")
        #expect(settings.endpoint == "http://127.0.0.1:9000")
        #expect(settings.bucket == "photos")
        #expect(settings.accessKey == "AKIA123")
        #expect(settings.secretKey == "se/cr+et")
        #expect(settings.region == "eu-west-3")
        #expect(!settings.place.contains("se/cr+et"))
        #expect(try S3Settings(url: "https://k:s@s3.example.net/my.bucket-1").region == "us-east-1")
    }

    @Test(arguments: ["ftp://k:s@h/b", "http://h/bucket", "http://k:s@h/", "http://k:s@h/Bad_Bucket",
                      "http://:s@h/bucket", "http://k:s@h/bucket?acl=1", "http://k:s@/bucket"])
    func badURLsAreRefused(url: String) {
        #expect(throws: ConfigurationError.self) { try S3Settings(url: url) }
    }

    @Test func keysArePlainPathsOnly() {
        for key in ["photos/ab/12_x9f_q.jpg", "upload/7.jpg", "a"] { #expect(S3Client.isValidKey(key)) }
        for key in ["", "/abs.jpg", "a/../b", "a//b", "./a", "a/", "sp ace.jpg", "q?x", "%2e%2e/x", "a\u{0}b"] {
            #expect(!S3Client.isValidKey(key))
        }
    }

    @Test func payloadHashesAreSHA256() {
        #expect(Digest.sha256.hexString([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Digest.sha256.hexString(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
