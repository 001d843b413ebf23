#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// The S3 client against a real S3-compatible server that checks every
/// signature (scripts/s3-server.py).
@Suite(.serialized, .enabled(if: S3TestServer.available, "needs moto: scripts/deps.sh installs it"))
struct S3IntegrationTests {
    let server = S3TestServer.shared

    func client(_ change: (inout S3Settings) -> Void = { _ in }) -> S3Client {
        var settings = server.settings
        // 3 s: moto on a busy machine may be slow, and a call is never retried.
        settings.timeoutMillis = 3000
        change(&settings)
        return S3Client(settings: settings)
    }

    @Test func anObjectIsStoredReadAndRemoved() throws {
        let s3 = client()
        let photo = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
        try s3.put("photos/0/1_abc_o.jpg", photo)
        #expect(try s3.get("photos/0/1_abc_o.jpg") == photo)
        #expect(try s3.exists("photos/0/1_abc_o.jpg"))
        try s3.delete("photos/0/1_abc_o.jpg")
        #expect(try s3.get("photos/0/1_abc_o.jpg") == nil)
        #expect(try !s3.exists("photos/0/1_abc_o.jpg"))
        try s3.delete("photos/0/1_abc_o.jpg")  // gone already: no error
        try s3.put("empty", [])
        #expect(try s3.get("empty") == [])
    }

    /// A photo's header without the rest of it: a ranged GET.
    @Test func anObjectsFirstBytesAreReadAlone() throws {
        let s3 = client()
        let photo = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
        try s3.put("photos/0/2_abc_o.jpg", photo)
        #expect(try s3.prefix("photos/0/2_abc_o.jpg", length: 1000) == Array(photo.prefix(1000)))
        #expect(try s3.prefix("photos/0/2_abc_o.jpg", length: 400_000) == photo, "a shorter object: all of it")
        #expect(try s3.prefix("photos/0/3_abc_o.jpg", length: 1000) == nil)
        try s3.delete("photos/0/2_abc_o.jpg")
    }

    @Test func keysAreListedInOrderAPageAtATime() throws {
        let s3 = client()
        let keys = (1...7).map { "list/\($0)_s.jpg" }
        for key in keys.reversed() { try s3.put(key, [1]) }
        try s3.put("listed-not/1.jpg", [1])
        #expect(try s3.list(prefix: "list/").map(\.key) == keys)
        #expect(try s3.list(prefix: "list/").allSatisfy { abs(($0.modified ?? 0) - Int(time(nil))) < 300 }, "with its time")
        #expect(try s3.list(prefix: "list/", limit: 3).map(\.key) == Array(keys.prefix(3)))
        #expect(try s3.list(prefix: "list/", startAfter: keys[2], limit: 3).map(\.key) == Array(keys[3..<6]))
        // Pages continue where the store's NextContinuationToken says, until IsTruncated is false.
        var listed: [String] = []
        try s3.forEachObject(prefix: "list/", pageSize: 3) { listed.append($0.key) }
        #expect(listed == keys)
        for key in keys { try s3.delete(key) }
        #expect(try s3.list(prefix: "list/").isEmpty)
    }

    @Test func aWrongSecretIsRefusedWithTheStoresReason() throws {
        let s3 = client { $0.secretKey += "x" }
        #expect {
            try s3.put("refused.jpg", [1, 2, 3])
        } throws: { error in
            guard let error = error as? S3Error, case .status(403, let code) = error.code else { return false }
            return code == "SignatureDoesNotMatch" && !error.unreachable && error.description.contains("PUT")
        }
        #expect(try client().get("refused.jpg") == nil)
    }

    @Test func aMissingBucketIsAnErrorNotAnEmptyAnswer() throws {
        let s3 = client { $0.bucket = "no-such-bucket" }
        #expect {
            _ = try s3.get("x.jpg")
        } throws: { error in
            guard let error = error as? S3Error, case .status(404, let code) = error.code else { return false }
            return code == "NoSuchBucket"
        }
    }

    @Test func aStoreThatDoesNotAnswerIsATimeoutAndThenServesAgain() throws {
        let s3 = client()
        // The short timeout only for the call made while the store is frozen: the bounded wait measured.
        let stalled = client { $0.timeoutMillis = 300 }
        try s3.put("outage.jpg", [9])
        server.freeze(true)
        defer { server.freeze(false) }
        #expect {
            try stalled.put("outage.jpg", [10])
        } throws: { error in
            (error as? S3Error)?.unreachable == true
        }
        server.freeze(false)
        // moto first works off the PUT it took while frozen: the client that timed out is asked
        // again until it is answered (bounded), then the object is read with the usual timeout.
        #expect(server.answersAgain { _ = try stalled.exists("outage.jpg") }, "the client that timed out is answered again")
        #expect(try s3.get("outage.jpg") != nil)
    }

    @Test func aStoreThatIsNotThereIsUnreachable() throws {
        let s3 = client { $0.endpoint = "http://127.0.0.1:1" }
        #expect {
            try s3.put("x.jpg", [1])
        } throws: { error in
            guard let error = error as? S3Error, case .transfer = error.code else { return false }
            return error.unreachable
        }
    }

    @Test func theBucketIsMadeOnceAndAgainIsFine() throws {
        let s3 = client { $0.bucket = "made-by-test" }
        try s3.createBucket()
        try s3.createBucket()
        try s3.put("a.jpg", [1])
        #expect(try s3.get("a.jpg") == [1])
    }
}

extension S3TestServer {
    /// Whether `probe` stops throwing within `millis` (asked again every
    /// 50 ms): after `freeze(false)` moto first works off what it took while
    /// frozen, and the clients' calls have whole-transfer timeouts and no retry.
    func answersAgain(within millis: Int64 = 20_000, _ probe: () throws -> Void) -> Bool {
        let deadline = monotonicMillis() + millis
        while (try? probe()) == nil {
            if monotonicMillis() >= deadline { return false }
            usleep(50_000)
        }
        return true
    }
}
