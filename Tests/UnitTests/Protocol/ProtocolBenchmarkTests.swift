#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import IReporterKit
import Testing
import TestSupport

// Micro-benchmark of the protocol's hot paths, off unless
// IREPORTER_PROTOCOL_BENCH is set (bench/micro/protocol.sh runs it in
// release): the streaming multipart parser on the app's upload bodies (fed
// in the 64 KiB reads the responder makes, file parts spooled to disk), the
// urlencoded parser on a login form, and the JSON of a 50-row stream.
@Suite struct ProtocolBenchmarkTests {
    static let enabled = ProcessInfo.processInfo.environment["IREPORTER_PROTOCOL_BENCH"] != nil
    static let iterations = Int(ProcessInfo.processInfo.environment["IREPORTER_PROTOCOL_BENCH_N"] ?? "") ?? 200
    static let boundary = "Boundary+0xAbCdEfGbOuNdArY"

    /// An upload as AFNetworking 1.x builds it: command, title, file.
    static func uploadBody(fileBytes: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let file = (0..<fileBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        func field(_ name: String, _ value: String) -> [UInt8] {
            Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        return field("command", "upload") + field("title", "Sunset over the harbour")
            + Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8)
            + file + Array("\r\n--\(boundary)--\r\n".utf8)
    }

    @Test(.enabled(if: enabled, "set IREPORTER_PROTOCOL_BENCH to run"))
    func protocolBenchmark() throws {
        let n = max(1, Self.iterations)
        let scratch = ScratchDirectory("protocol-bench")
        for (label, size) in [("640x640 upload", 61_621), ("12 MP upload", 3_282_157)] {
            let body = Self.uploadBody(fileBytes: size)
            let runs = try MicroBenchmark.measure(n) {
                let parser = MultipartParser(boundary: Array(Self.boundary.utf8),
                                             limits: MultipartLimits(maxFileBytes: 20 << 20), spoolDirectory: scratch.path)
                try body.withUnsafeBytes { all in
                    for start in stride(from: 0, to: all.count, by: 64 * 1024) {
                        try parser.feed(UnsafeRawBufferPointer(rebasing: all[start..<min(start + 64 * 1024, all.count)]))
                    }
                }
                let form = try parser.finish()
                #expect(form.file("file")?.size == size)
                for path in form.spooledPaths { unlink(path) }
            }
            let mbPerSecond = Double(body.count) / 1e6 / (MicroBenchmark.median(runs.wall) / 1e3)
            print("protocol multipart \(label) (\(body.count) bytes, spooled): ms \(MicroBenchmark.format(runs)), "
                  + String(format: "%.0f MB/s", mbPerSecond))
        }

        let login = Array("command=login&username=user0001&password=5f4dcc3b5aa765d61d8327deb882cf99".utf8)
        let loginRuns = MicroBenchmark.measure(n * 50) { #expect(URLEncodedForm.parse(login).field("command") != nil) }
        print("protocol urlencoded login form (\(login.count) bytes): ms \(MicroBenchmark.format(loginRuns))")

        let photos = PhotoList(photos: (0..<50).map { i in
            PhotoRecord(id: Int64(10001 - i), title: Array("Photo \(i) – café \"quoted\" / 写真".utf8), userID: Int64(i % 1000 + 1),
                        username: Array("user\(i)".utf8))
        })
        var json: [UInt8] = []
        let jsonRuns = MicroBenchmark.measure(n * 50) { json = photos.json }
        print("protocol JSON stream of 50 rows (\(json.count) bytes): ms \(MicroBenchmark.format(jsonRuns))")
    }
}
