#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// Multipart bodies as the iPhone app (AFNetworking 1.x), curl and browsers
/// build them, fed in every chunking, and broken in the ways clients break them.
final class MultipartTests {
    static let boundary = "Boundary+0xAbCdEfGbOuNdArY"
    let scratch = ScratchDirectory("multipart")
    var directory: String { scratch.path }

    /// The layout AFNetworking 1.x's multipart builder writes: text parts with
    /// only Content-Disposition, the file part with Content-Type, CRLF between
    /// each part's data and the next boundary, `--boundary--` to close.
    static func appBody(fields: [(String, String)], file: [UInt8]?, filename: String = "photo.jpg") -> [UInt8] {
        var body: [UInt8] = []
        for (index, (name, value)) in fields.enumerated() {
            body += Array("\(index == 0 ? "" : "\r\n")--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)".utf8)
        }
        if let file {
            body += Array("\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(filename)\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8)
            body += file
        }
        body += Array("\r\n--\(boundary)--\r\n".utf8)
        return body
    }

    func parse(_ body: [UInt8], chunkSize: Int = 65536, maxFileBytes: Int = 1 << 20,
               boundary: String = MultipartTests.boundary) throws(FormDataError) -> FormData {
        let parser = MultipartParser(boundary: Array(boundary.utf8), limits: MultipartLimits(maxFileBytes: maxFileBytes),
                                     spoolDirectory: directory)
        var offset = 0
        while offset < body.count {
            let end = min(offset + chunkSize, body.count)
            try parser.feed(Array(body[offset..<end]))
            offset = end
        }
        return try parser.finish()
    }

    @Test(arguments: [1, 2, 3, 7, 26, 29, 64, 1000, 65536])
    func theAppsUploadInAnyChunking(chunkSize: Int) throws {
        // Photo bytes that contain CRLF, dashes and a near-boundary.
        let photo: [UInt8] = [0xFF, 0xD8] + Array("\r\n--Boundary+0xAbCdEfGbOuNdArZ\r\n--\r\n".utf8) + (0..<3000).map { UInt8($0 % 251) } + [0xFF, 0xD9]
        let body = Self.appBody(fields: [("command", "upload"), ("title", "Sunset at the pier")], file: photo)
        let form = try parse(body, chunkSize: chunkSize)
        #expect(form.field("command") == Array("upload".utf8))
        #expect(form.field("title") == Array("Sunset at the pier".utf8))
        let file = try #require(form.file("file"))
        #expect(file.filename == Array("photo.jpg".utf8))
        #expect(file.contentType == Array("image/jpeg".utf8))
        #expect(file.size == photo.count)
        #expect(readFile(try #require(file.spoolPath)) == photo)
        #expect(form.spooledPaths == [file.spoolPath!])
    }

    @Test func curlAndBrowserLayouts() throws {
        // curl: quoted boundary in the header, preamble-free, per-part Content-Type on files only.
        let boundary = "------------------------d74496d66958873e"
        let body = Array("--\(boundary)\r\ncontent-disposition: form-data; name=\"command\"\r\n\r\nlogin\r\n--\(boundary)\r\nContent-Disposition: form-data; name=username\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nal\"ice\r\n--\(boundary)--".utf8)
        #expect(MultipartParser.boundary(fromContentType: "multipart/form-data; boundary=\"\(boundary)\"") == Array(boundary.utf8))
        let form = try parse(body, boundary: boundary)
        #expect(form.field("command") == Array("login".utf8))
        #expect(form.field("username") == Array("al\"ice".utf8))
        // A browser's empty file input: a file part with an empty filename.
        let browser = Array("preamble\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--b--\r\nepilogue".utf8)
        let empty = try parse(browser, boundary: "b")
        #expect(empty.file("file")?.spoolPath == nil)
        #expect(scratch.entries.isEmpty)
    }

    /// PHP reads lines ended by LF alone and part headers folded onto
    /// several lines: a hand-made PHP-era client's form.
    @Test(arguments: [1, 2, 3, 5, 7, 64, 65536])
    func bareLineFeedsAndFoldedHeadersInAnyChunking(chunkSize: Int) throws {
        let photo: [UInt8] = [0xFF, 0xD8] + Array("\r\n\n-\r\n--C\r\n-B--\n".utf8) + (0..<500).map { UInt8($0 % 251) } + [0x0D, 0xFF, 0xD9]
        let head = "preamble\n--B\nContent-Disposition: form-data; name=\"command\"\n\nupload\n"
            + "--B \t\nContent-Disposition: form-data;\r\n name=\"title\"\r\n\r\nLine one\r\nline two\r\r\n"
            + "--B\r\nContent-Disposition: form-data;\n\tname=\"file\"; filename=\"a.jpg\"\nContent-Type:\n image/jpeg\n\n"
        let body = Array(head.utf8) + photo + Array("\n--B--\nepilogue".utf8)
        let form = try parse(body, chunkSize: chunkSize, boundary: "B")
        #expect(form.field("command") == Array("upload".utf8))
        #expect(form.field("title") == Array("Line one\r\nline two\r".utf8), "one CR before the delimiter is the line break's")
        let file = try #require(form.file("file"))
        #expect(file.filename == Array("a.jpg".utf8) && file.contentType == Array("image/jpeg".utf8))
        #expect(readFile(try #require(file.spoolPath)) == photo)
    }

    @Test func boundaryFromContentType() {
        #expect(MultipartParser.boundary(fromContentType: "multipart/form-data; boundary=Boundary+0xAbCdEfGbOuNdArY")
                == Array(Self.boundary.utf8))
        #expect(MultipartParser.boundary(fromContentType: "Multipart/Form-Data;boundary=x; charset=utf-8") == Array("x".utf8))
        #expect(MultipartParser.boundary(fromContentType: "multipart/form-data") == nil)
        #expect(MultipartParser.boundary(fromContentType: "multipart/mixed; boundary=x") == nil)
        #expect(MultipartParser.boundary(fromContentType: "multipart/form-data; boundary=") == nil)
    }

    @Test func repeatedAndArrayNames() throws {
        let body = Self.appBody(fields: [("command", "login"), ("command", "upload"), ("file[]", "x")], file: nil)
        let form = try parse(body)
        #expect(form.field("command") == Array("upload".utf8))
        #expect(form.field("file") == nil)
        #expect(form.file("file") == nil)
        #expect(form.arrayNames == ["file"])
    }

    @Test(arguments: [
        ("no boundary at all", "command=login"),
        ("truncated in a part", "--B\r\nContent-Disposition: form-data; name=\"command\"\r\n\r\nlog"),
        ("missing final boundary", "--B\r\nContent-Disposition: form-data; name=\"command\"\r\n\r\nlogin\r\n"),
        ("headers never end", "--B\r\nContent-Disposition: form-data; name=\"command\""),
        ("no disposition", "--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--"),
        ("no name", "--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--"),
        ("header without colon", "--B\r\nbogus\r\n\r\nx\r\n--B--"),
        ("a continuation with nothing before it", "--B\r\n Content-Disposition: form-data; name=a\r\n\r\nx\r\n--B--"),
        ("a lone CR after a boundary", "--B\rContent-Disposition: form-data; name=a\r\n\r\nx\r\n--B--"),
        ("garbage after boundary", "--Bxyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--B--"),
    ])
    func brokenBodiesAreRejected(_ label: String, _ body: String) {
        #expect(throws: FormDataError.self, "\(label)") { try self.parse(Array(body.utf8), boundary: "B") }
    }

    @Test func brokenUploadLeavesNoSpoolFileBehind() throws {
        var body = Self.appBody(fields: [("command", "upload")], file: Array(repeating: 0x41, count: 5000))
        body.removeLast(20)
        do {
            let parser = MultipartParser(boundary: Array(Self.boundary.utf8), limits: MultipartLimits(maxFileBytes: 1 << 20),
                                         spoolDirectory: directory)
            try parser.feed(body)
            #expect(throws: FormDataError.self) { try parser.finish() }
        }
        #expect(scratch.entries.isEmpty)
    }

    @Test func fileOverTheLimitStopsTheParse() {
        let body = Self.appBody(fields: [("command", "upload")], file: Array(repeating: 0x41, count: 10_001))
        #expect(throws: FormDataError.fileTooLarge(limit: 10_000)) { try self.parse(body, chunkSize: 999, maxFileBytes: 10_000) }
        #expect(scratch.entries.isEmpty)
        // Exactly at the limit is fine.
        let fits = Self.appBody(fields: [], file: Array(repeating: 0x41, count: 10_000))
        #expect((try? parse(fits, maxFileBytes: 10_000))?.file("file")?.size == 10_000)
    }

    @Test func oversizedFieldsHeadersAndPartCountsAreRefused() {
        let bigField = Self.appBody(fields: [("title", String(repeating: "t", count: 70_000))], file: nil)
        #expect(throws: FormDataError.overLimit("a text field")) { try self.parse(bigField) }
        let bigHeader = Array("--B\r\nContent-Disposition: form-data; name=\"\(String(repeating: "n", count: 9000))\"\r\n\r\nx\r\n--B--".utf8)
        #expect(throws: FormDataError.overLimit("part headers")) { try self.parse(bigHeader, chunkSize: 100, boundary: "B") }
        let manyParts = Self.appBody(fields: (0..<40).map { ("f\($0)", "v") }, file: nil)
        #expect(throws: FormDataError.overLimit("number of parts")) { try self.parse(manyParts) }
    }

    /// A header block is accepted up to the limit and refused past it, as
    /// before its end was looked for only as far as the limit reaches:
    /// CRLF or bare-LF lines, the blank line in either form, any chunking.
    @Test(arguments: [("\r\n", "\r\n"), ("\n", "\n"), ("\r\n", "\n"), ("\n", "\r\n")], [1, 7, 65536])
    func headerBlocksAtTheLimit(lineBreaks: (line: String, blank: String), chunkSize: Int) throws {
        let limit = MultipartLimits(maxFileBytes: 0).maxHeaderBytes
        let prefix = "Content-Disposition: form-data; name=\""
        // Counted from the boundary line's LF to the blank line's.
        func name(headerBlockLength: Int) -> String {
            String(repeating: "n", count: headerBlockLength - lineBreaks.line.utf8.count - prefix.utf8.count - 1)
        }
        func body(headerBlockLength: Int) -> [UInt8] {
            let (line, blank) = lineBreaks
            return Array("--B\(line)\(prefix)\(name(headerBlockLength: headerBlockLength))\"\(line)\(blank)x\(line)--B--\(line)".utf8)
        }
        let fits = try parse(body(headerBlockLength: limit), chunkSize: chunkSize, boundary: "B")
        #expect(fits.field(name(headerBlockLength: limit)) == Array("x".utf8))
        #expect(throws: FormDataError.overLimit("part headers")) {
            try self.parse(body(headerBlockLength: limit + 1), chunkSize: chunkSize, boundary: "B")
        }
    }

    @Test func unwritableSpoolDirectoryIsAnError() {
        let parser = MultipartParser(boundary: Array("B".utf8), limits: MultipartLimits(maxFileBytes: 100),
                                     spoolDirectory: "/nonexistent-dir")
        let body = Array("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\n\r\nx\r\n--B--".utf8)
        #expect(throws: FormDataError.spoolFailed(ENOENT)) { try parser.feed(body) }
    }
}
