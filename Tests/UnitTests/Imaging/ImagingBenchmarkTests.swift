import CGD
import CJpegScale
import Foundation
import IReporterKit
import Testing

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
                let status = ir_jpeg_decode_scaled(path, 180, 50_000_000, 0, &im, &info, nil, 0)
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
