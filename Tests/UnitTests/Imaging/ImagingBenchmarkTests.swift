import CGD
import CJpegScale
import Foundation
@testable import IReporterKit
import Testing
import TestSupport

// Thumbnail micro-benchmark, off unless IREPORTER_THUMB_BENCH names JPEG
// files (colon-separated). Run it through bench/micro/thumbnail.sh, which
// makes the reference's 640x640 and 4032x3024 photos and builds in release:
//   IREPORTER_THUMB_BENCH=/tmp/a.jpg:/tmp/b.jpg IREPORTER_THUMB_BENCH_N=50 \
//     swift test -c release -Xswiftc -enable-testing --filter ImagingBenchmark
// IREPORTER_THUMB_BENCH_OUT=/some/dir also writes the thumbnails there.
@Suite struct ImagingBenchmarkTests {
    static let files: [String] = ProcessInfo.processInfo.environment["IREPORTER_THUMB_BENCH"]?
        .split(separator: ":").map(String.init) ?? []
    static let iterations = Int(ProcessInfo.processInfo.environment["IREPORTER_THUMB_BENCH_N"] ?? "") ?? 30

    @Test(.enabled(if: !files.isEmpty, "set IREPORTER_THUMB_BENCH to run"))
    func thumbnailBenchmark() throws {
        let thumbnailer = Thumbnailer()
        let n = max(1, Self.iterations)
        for path in Self.files {
            let header = try Thumbnailer.readHeader(ofFileAt: path)
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            // Decode only (CJpegScale): the scaled libjpeg-turbo decode into gd.
            var info = ir_jpeg_info()
            let decode = try MicroBenchmark.measure(n) {
                var im: gdImagePtr? = nil
                let status = ir_jpeg_decode_scaled(path, 180, 50_000_000, 0, 0, &im, &info, nil, 0)
                guard status == IR_JPEG_OK, let im else { throw JPEGImageError.truncatedOrCorrupt("status \(status)") }
                gdImageDestroy(im)
            }
            // The whole public call: decode + crop/resample + orientation + encode.
            var bytes = 0
            let total = try MicroBenchmark.measure(n) {
                bytes = try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: 50_000_000).count
            }
            // Baseline in the same run: what the PHP reference's thumb() does
            // through gd (full decode, CopyResized of the whole frame, q85).
            let gdBaseline = try MicroBenchmark.measure(n) {
                guard let f = fopen(path, "rb") else { throw JPEGImageError.unreadable(path) }
                defer { fclose(f) }
                guard let src = gdImageCreateFromJpeg(f), let dst = gdImageCreateTrueColor(180, 180) else {
                    throw JPEGImageError.truncatedOrCorrupt("gd")
                }
                defer { gdImageDestroy(src); gdImageDestroy(dst) }
                gdImageCopyResized(dst, src, 0, 0, 0, 0, 180, 180, ir_gd_sx(src), ir_gd_sy(src))
                var size: Int32 = 0
                guard let out = gdImageJpegPtr(dst, &size, 85) else { throw JPEGImageError.encodingFailed("gd") }
                gdFree(out)
            }
            print("""
                thumbnail \(path): \(header.width)x\(header.height), \(size) bytes, \
                decoded at \(info.scale_num)/8 = \(info.scaled_width)x\(info.scaled_height), \
                thumb \(bytes) bytes, \(n) runs, ms wall median / mean / min (thread CPU median / min): \
                decode \(MicroBenchmark.format(decode)), total \(MicroBenchmark.format(total)), \
                crop+resample+orient+encode ~\(String(format: "%.2f", (total.cpu.min() ?? 0) - (decode.cpu.min() ?? 0))) (CPU min difference); \
                PHP-style gd baseline (full decode + CopyResized + q85) \(MicroBenchmark.format(gdBaseline))
                THUMBJSON {"file": "\(path)", "file_bytes": \(size), "width": \(header.width), "height": \(header.height), "runs": \(n), "ours_wall_ms": \(MicroBenchmark.median(total.wall)), \
                "ours_wall_min_ms": \(total.wall.min() ?? 0), "decode_wall_ms": \(MicroBenchmark.median(decode.wall)), \
                "gd_baseline_wall_ms": \(MicroBenchmark.median(gdBaseline.wall))}
                """)
            #expect(bytes > 0)
            // IREPORTER_THUMB_BENCH_OUT=dir: keep the thumbnails to look at.
            if let dir = ProcessInfo.processInfo.environment["IREPORTER_THUMB_BENCH_OUT"], !dir.isEmpty {
                let name = (path as NSString).lastPathComponent.replacingOccurrences(of: ".jpg", with: "-thumb.jpg")
                let jpeg = try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: 50_000_000)
                #expect(FileManager.default.createFile(atPath: dir + "/" + name, contents: Data(jpeg)))
            }
        }
    }
}

// The upload's worker path step by step (issue 14), on the same photos: each
// step the upload has to do, measured alone, against the whole path in
// process (multipart spooling of a real body, then the `upload` command on
// the in-memory database with the real upload folder and its fsyncs).
extension ImagingBenchmarkTests {
    @Test(.enabled(if: !files.isEmpty, "set IREPORTER_THUMB_BENCH to run"))
    func uploadStepsBenchmark() throws {
        let n = max(1, Self.iterations)
        let scratch = ScratchDirectory("upload-steps")
        let folder = UploadFolder(directory: scratch.path)
        let (api, cookie) = try Self.signedInAPI(files: folder)
        for path in Self.files {
            let photo = try #require(readFile(path))
            let boundary = "Boundary+0xAbCdEfGbOuNdArY"
            let body = Self.multipartBody(photo: photo, boundary: boundary)
            let spoolPath = scratch.path + "/bench-spool.jpg"
            #expect(FileManager.default.createFile(atPath: spoolPath, contents: Data(photo)))

            let spoolWrite = try MicroBenchmark.measure(n) {
                let parser = MultipartParser(boundary: Array(boundary.utf8), limits: MultipartLimits(maxFileBytes: 20 << 20),
                                             spoolDirectory: scratch.path)
                try Self.feed(body, to: parser)
                for spooled in try parser.finish().spooledPaths { unlink(spooled) }
            }
            var decoded: GDImage?
            let decode = try MicroBenchmark.measure(n) {
                decoded = try Thumbnailer().decode(fileAt: spoolPath, minShortSide: 180, maxPixels: 50_000_000).0
            }
            let image = try #require(decoded)
            var square: GDImage?
            let resample = MicroBenchmark.measure(n) { square = image.centreSquare(side: 180) }
            let thumbnail = try #require(square)
            var encoded = 0
            let encode = MicroBenchmark.measure(n) { encoded = thumbnail.jpegBytes(quality: 85)?.count ?? 0 }
            let strippedPath = scratch.path + "/bench-stripped.jpg"
            let strip = try MicroBenchmark.measure(n) {
                // Always a copy (orientation 3 adds a tag): what every upload paid before issue 14.
                unlink(strippedPath)
                _ = try JPEGMetadataStripper.strip(from: spoolPath, orientation: 3) { strippedPath }
            }
            // What publish must make durable: the photo and the thumbnail
            // (written just before, as the upload writes them), then the
            // two folders their new names are in.
            try folder.tree.makeFolder(of: 2)
            let durable = try MicroBenchmark.measure(n, prepare: {
                unlink(strippedPath)
                #expect(FileManager.default.createFile(atPath: strippedPath, contents: Data(photo)))
                #expect(FileManager.default.createFile(atPath: strippedPath + ".thumb", contents: Data(count: encoded)))
            }) {
                for file in [strippedPath, strippedPath + ".thumb", scratch.path, folder.tree.folder(of: 2)] {
                    try PhotoTree.sync(file)
                }
            }
            let whole = try MicroBenchmark.measure(n) {
                let parser = MultipartParser(boundary: Array(boundary.utf8), limits: MultipartLimits(maxFileBytes: 20 << 20),
                                             spoolDirectory: scratch.path)
                try Self.feed(body, to: parser)
                let form = try parser.finish()
                let answer = api.handle(APIRequest(parameters: form, sessionCookie: cookie)) // removes its spool files
                guard answer.body == Array(#"{"successful":1}"#.utf8) else {
                    throw JPEGImageError.encodingFailed(String(decoding: answer.body, as: UTF8.self))
                }
            }
            let steps: [(String, MicroBenchmark.Runs)] = [
                ("multipart spooling", spoolWrite), ("scaled decode", decode), ("resample", resample),
                ("thumbnail encode", encode), ("metadata-stripped copy", strip), ("fsyncs (2 files, 2 folders)", durable),
            ]
            let sum = steps.map { MicroBenchmark.median($0.1.cpu) }.reduce(0, +)
            let sumWall = steps.map { MicroBenchmark.median($0.1.wall) }.reduce(0, +)
            var table = "steps \(path), \(n) runs, medians in ms:\nsteps | step | thread CPU | wall |\nsteps |---|---:|---:|\n"
            for (name, runs) in steps {
                table += String(format: "steps | %@ | %.3f | %.3f |\n", name, MicroBenchmark.median(runs.cpu), MicroBenchmark.median(runs.wall))
            }
            table += String(format: "steps | **sum of the steps** | %.3f | %.3f |\n", sum, sumWall)
            table += String(format: "steps | **whole path** (parse + upload command, in-memory DB) | %.3f | %.3f |\n",
                            MicroBenchmark.median(whole.cpu), MicroBenchmark.median(whole.wall))
            table += String(format: "steps | whole / sum | %.2f | %.2f |", MicroBenchmark.median(whole.cpu) / sum,
                            MicroBenchmark.median(whole.wall) / sumWall)
            print(table)
        }
    }

    /// An API on in-memory stores but the real upload folder, and the cookie of a signed-in user.
    static func signedInAPI(files: UploadFolder) throws -> (IReporterAPI, [UInt8]) {
        let users = InMemoryUserStore(hashesPasswords: false)
        let photos = InMemoryPhotoStore(users: users)
        var policy = AppServices.Policy()
        policy.uploadRateLimit = 0
        let services = AppServices(users: users, photos: photos, photoFiles: files, comments: photos, votes: photos,
                                   follows: InMemoryFollowStore(users: users, photos: photos),
                                   notifications: InMemoryNotificationStore(users: users, photos: photos),
                                   search: InMemoryPhotoSearch(photos: photos), sessions: InMemorySessionStore(),
                                   counters: InMemoryCounters(), policy: policy)
        let api = IReporterAPI(services: services)
        var form = FormData()
        for (name, value) in [("command", "register"), ("username", "bench"), ("password", String(repeating: "a", count: 40))] {
            form.setField(Array(name.utf8), Array(value.utf8))
        }
        let registered = api.handle(APIRequest(parameters: form))
        let header = try #require(registered.setCookie.first)
        return (api, Array(header.split(separator: ";")[0].dropFirst("PHPSESSID=".count).utf8))
    }

    /// The app's upload: `command`, `title`, then the photo.
    static func multipartBody(photo: [UInt8], boundary: String) -> [UInt8] {
        var body = ""
        for (name, value) in [("command", "upload"), ("title", "Benchmark")] {
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
        return Array(body.utf8) + photo + Array("\r\n--\(boundary)--\r\n".utf8)
    }

    /// In the gateway's read size (64 KiB).
    static func feed(_ body: [UInt8], to parser: MultipartParser) throws {
        try body.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let end = min(offset + 65536, raw.count)
                try parser.feed(UnsafeRawBufferPointer(rebasing: raw[offset..<end]))
                offset = end
            }
        }
    }
}
