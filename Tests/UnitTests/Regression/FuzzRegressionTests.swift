#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit

/// Inputs found by the fuzz harnesses in Fuzz/ (docs/FUZZING.md), minimised,
/// and kept here so that the bugs stay fixed. The raw inputs are in
/// Fuzz/Crashes/<harness>/ and are replayed by Fuzz/run.sh.
///
@Suite struct FuzzRegressionTests {
    // MARK: - MultipartParser: the answer must not depend on the chunking

    static func parse(_ body: [UInt8], boundary: String, chunkSize: Int) -> Result<FormData, FormDataError> {
        var template = Array("/tmp/ireporter-fuzzreg-XXXXXX".utf8CString)
        let directory = String(cString: mkdtemp(&template))
        defer { _ = system("rm -rf '\(directory)'") }
        let parser = MultipartParser(boundary: Array(boundary.utf8), limits: MultipartLimits(maxFileBytes: 1 << 20),
                                     spoolDirectory: directory)
        do {
            var offset = 0
            while offset < body.count {
                let end = min(offset + chunkSize, body.count)
                try parser.feed(Array(body[offset..<end]))
                offset = end
            }
            let form = try parser.finish()
            for path in form.spooledPaths { unlink(path) }
            return .success(form)
        } catch {
            return .failure(error)
        }
    }

    static func accepted(_ result: Result<FormData, FormDataError>) -> Bool {
        if case .success = result { return true }
        return false
    }

    /// Fuzz/Crashes/multipart/header-limit-chunking-305b. While the blank line
    /// that ends a part's headers was still arriving, `.headers` compared
    /// `available` (which includes up to 3 bytes of that CRLFCRLF) with
    /// maxHeaderBytes, but a complete block is measured without them: a
    /// header block of maxHeaderBytes - 2 ... maxHeaderBytes passed in one
    /// feed and was refused when the body arrived in small pieces.
    @Test func headerBlockAtTheLimitDoesNotDependOnChunking() throws {
        let limit = MultipartLimits(maxFileBytes: 1).maxHeaderBytes
        // The block runs from the CRLF after the boundary to the blank line.
        let disposition = "\r\nContent-Disposition: form-data; name=\"a\"\r\nX-Pad: "
        let body = Array("--B\(disposition)\(String(repeating: "p", count: limit - disposition.utf8.count))\r\n\r\nv\r\n--B--".utf8)
        let whole = Self.parse(body, boundary: "B", chunkSize: body.count)
        #expect(try whole.get().field("a") == Array("v".utf8))
        for chunkSize in [1, 2, 3, 5, 4096] {
            let chunked = Self.parse(body, boundary: "B", chunkSize: chunkSize)
            #expect(Self.accepted(chunked), "chunk size \(chunkSize): \(chunked)")
        }
        // One byte more is refused, in any chunking.
        let over = Array("--B\(disposition)\(String(repeating: "p", count: limit + 1 - disposition.utf8.count))\r\n\r\nv\r\n--B--".utf8)
        for chunkSize in [1, 2, 3, 5, 4096, over.count] {
            #expect(throws: FormDataError.overLimit("part headers"), "chunk size \(chunkSize)") {
                try Self.parse(over, boundary: "B", chunkSize: chunkSize).get()
            }
        }
    }

    /// Fuzz/Crashes/multipart/padding-limit-chunking. The 64-byte limit on
    /// transport padding after a boundary was only enforced while the CRLF
    /// after it had not arrived: 70 spaces passed in one feed and were
    /// refused in small chunks. Now refused however the body is split.
    @Test func paddingAfterABoundaryDoesNotDependOnChunking() {
        let body = Array("--B\(String(repeating: " ", count: 70))\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--B--".utf8)
        for chunkSize in [1, 16, 64, body.count] {
            #expect(throws: FormDataError.malformed("padding after a boundary"), "chunk size \(chunkSize)") {
                try Self.parse(body, boundary: "B", chunkSize: chunkSize).get()
            }
        }
        // At the limit (64) it is accepted, also either way.
        let fits = Array("--B\(String(repeating: "\t", count: 64))\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--B--".utf8)
        #expect(Self.accepted(Self.parse(fits, boundary: "B", chunkSize: 1)))
        #expect(Self.accepted(Self.parse(fits, boundary: "B", chunkSize: fits.count)))
    }

    // MARK: - SessionFiles.load: a hostile ireporter_created value

    /// Fuzz/Crashes/session/created-overflow. `Int(now) - Int(created)`
    /// trapped (arithmetic overflow) when the stored creation time was far
    /// below zero, which killed the worker on every request with that
    /// cookie. Run in a child process, since a regression is a trap.
    @Test func hugeNegativeCreationTimeDoesNotTrap() async {
        await #expect(processExitsWith: .success) {
            var template = Array("/tmp/ireporter-fuzzreg-XXXXXX".utf8CString)
            let directory = String(cString: mkdtemp(&template))
            defer { _ = system("rm -rf '\(directory)'") }
            let id = "abcdefghijklmnopqrstuv0123456789"
            for data in ["ireporter_created|i:-9223372036854775808;", "ireporter_created|d:-1e19;",
                         "IdUser|s:1:\"7\";ireporter_created|s:5:\"-1e99\";"] {
                let file = fopen("\(directory)/sess_\(id)", "w")!
                fputs(data, file)
                fclose(file)
                // Long expired: no session, and no crash.
                let session = try? SessionFiles(directory: directory, idleTimeout: 3600).load(id: Array(id.utf8))
                if session != nil { exit(1) }
            }
        }
    }

    // MARK: - PHPStrings.intCast: PHP's (int) of an infinite float string is 0

    /// Fuzz/Crashes/strings/intcast-infinity. PHP 8 (zend_dval_to_lval_cap)
    /// turns a numeric string whose value overflows to ±INF into 0; finite
    /// out-of-range values saturate. intCast used to saturate both.
    @Test func infiniteNumericStringsCastToZero() {
        // Finite but out of range: saturates, as in PHP.
        #expect(PHPStrings.intCast(Array("1e19".utf8)) == Int64.max)
        #expect(PHPStrings.intCast(Array("-99999999999999999999".utf8)) == Int64.min)
        #expect(PHPStrings.intCast(Array("1e999".utf8)) == 0)
        #expect(PHPStrings.intCast(Array("-1e999".utf8)) == 0)
        #expect(PHPStrings.intCast(Array("  1.5e400abc".utf8)) == 0)
    }
}
