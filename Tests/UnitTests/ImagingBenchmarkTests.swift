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
            let decode = try Self.measure(n) {
                var im: gdImagePtr? = nil
                let status = ir_jpeg_decode_scaled(path, 180, 50_000_000, &im, &info, nil, 0)
                guard status == IR_JPEG_OK, let im else { throw JPEGImageError.truncatedOrCorrupt("status \(status)") }
                gdImageDestroy(im)
            }
            // The whole public call: decode + crop/resample + orientation + encode.
            var bytes = 0
            let total = try Self.measure(n) {
                bytes = try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: 50_000_000).count
            }
            // Baseline in the same run: what the PHP reference's thumb() does
            // through gd (full decode, CopyResized of the whole frame, q85).
            let gdBaseline = try Self.measure(n) {
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
                decode \(Self.format(decode)), total \(Self.format(total)), \
                crop+resample+orient+encode ~\(String(format: "%.2f", (total.cpu.min() ?? 0) - (decode.cpu.min() ?? 0))) (CPU min difference); \
                PHP-style gd baseline (full decode + CopyResized + q85) \(Self.format(gdBaseline))
                THUMBJSON {"file": "\(path)", "file_bytes": \(size), "width": \(header.width), "height": \(header.height), "runs": \(n), "ours_wall_ms": \(Self.median(total.wall)), \
                "ours_wall_min_ms": \(total.wall.min() ?? 0), "decode_wall_ms": \(Self.median(decode.wall)), \
                "gd_baseline_wall_ms": \(Self.median(gdBaseline.wall))}
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

    /// Wall-clock and this thread's CPU milliseconds of each of n runs (after
    /// a warm-up). CPU time is the steadier figure on a shared, busy machine.
    static func measure(_ n: Int, _ body: () throws -> Void) throws -> Runs {
        for _ in 0..<min(3, n) { try body() }  // warm-up: page cache, allocator
        var runs = Runs()
        for _ in 0..<n {
            let (w0, c0) = (now(CLOCK_MONOTONIC), now(CLOCK_THREAD_CPUTIME_ID))
            try body()
            runs.wall.append(now(CLOCK_MONOTONIC) - w0)
            runs.cpu.append(now(CLOCK_THREAD_CPUTIME_ID) - c0)
        }
        return runs
    }

    struct Runs {
        var wall: [Double] = [], cpu: [Double] = []
    }

    static func now(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) * 1e3 + Double(ts.tv_nsec) / 1e6
    }

    static func median(_ v: [Double]) -> Double { let s = v.sorted(); return s[s.count / 2] }

    static func format(_ r: Runs) -> String {
        String(format: "%.2f / %.2f / %.2f (cpu %.2f / %.2f)", median(r.wall), r.wall.reduce(0, +) / Double(r.wall.count),
               r.wall.min() ?? 0, median(r.cpu), r.cpu.min() ?? 0)
    }
}
