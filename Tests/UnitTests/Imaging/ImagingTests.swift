#if canImport(Glibc)
import Glibc
#endif
import CGD
import CJpegScale
import Foundation
import IReporterKit
import Testing

// Tests for Sources/IReporterKit/Imaging and Sources/CJpegScale. The JPEGs
// are made here with gd (gdImageJpegPtr); two tiny ImageMagick-made files
// (grayscale, Adobe YCCK) are inlined as base64 because gd only writes YCbCr.

// MARK: - helpers

/// An ITColor colour, with a loose comparison for JPEG round trips.
private struct ITColor: Equatable, CustomStringConvertible {
    var r: Int, g: Int, b: Int
    static let red = ITColor(r: 255, g: 0, b: 0)
    static let green = ITColor(r: 0, g: 255, b: 0)
    static let blue = ITColor(r: 0, g: 0, b: 255)
    static let yellow = ITColor(r: 255, g: 255, b: 0)
    var gd: Int32 { Int32(r << 16 | g << 8 | b) }
    var description: String { "rgb(\(r),\(g),\(b))" }
    func isClose(to o: ITColor, tolerance: Int = 48) -> Bool {
        abs(r - o.r) <= tolerance && abs(g - o.g) <= tolerance && abs(b - o.b) <= tolerance
    }
}

/// A gd truecolor image for drawing test pictures; destroyed on deinit.
private final class ITCanvas {
    let im: gdImagePtr
    init(_ width: Int, _ height: Int, fill: ITColor = ITColor(r: 128, g: 128, b: 128)) {
        im = gdImageCreateTrueColor(Int32(width), Int32(height))!
        rect(0, 0, width, height, fill)
    }
    /// Decodes JPEG bytes with gd's own loader (independent of CJpegScale).
    init?(jpeg: [UInt8]) {
        guard let p = jpeg.withUnsafeBytes({ gdImageCreateFromJpegPtr(Int32($0.count), UnsafeMutableRawPointer(mutating: $0.baseAddress)) })
        else { return nil }
        im = p
    }
    deinit { gdImageDestroy(im) }
    var width: Int { Int(ir_gd_sx(im)) }
    var height: Int { Int(ir_gd_sy(im)) }
    /// Fills [x, x+w) x [y, y+h).
    func rect(_ x: Int, _ y: Int, _ w: Int, _ h: Int, _ c: ITColor) {
        gdImageFilledRectangle(im, Int32(x), Int32(y), Int32(x + w - 1), Int32(y + h - 1), c.gd)
    }
    /// Deterministic pixel noise, so the entropy-coded data is large.
    func noise(seed: UInt32 = 12345) {
        var s = seed
        for y in 0..<height {
            for x in 0..<width {
                s = s &* 1_664_525 &+ 1_013_904_223
                let v = Int32(bitPattern: (s >> 8) & 0x00FF_FFFF)
                gdImageSetPixel(im, Int32(x), Int32(y), v)
            }
        }
    }
    func pixel(_ x: Int, _ y: Int) -> ITColor {
        let c = ir_gd_truecolor_pixel(im, Int32(x), Int32(y))
        return ITColor(r: Int(ir_gd_red(c)), g: Int(ir_gd_green(c)), b: Int(ir_gd_blue(c)))
    }
    /// Mean colour of a small box centred on (x, y), to average JPEG ringing.
    func average(_ x: Int, _ y: Int, radius: Int = 4) -> ITColor {
        var r = 0, g = 0, b = 0, n = 0
        for yy in (y - radius)...(y + radius) {
            for xx in (x - radius)...(x + radius) {
                let p = pixel(xx, yy)
                r += p.r; g += p.g; b += p.b; n += 1
            }
        }
        return ITColor(r: r / n, g: g / n, b: b / n)
    }
    func jpeg(quality: Int32 = 90, progressive: Bool = false) -> [UInt8] {
        gdImageInterlace(im, progressive ? 1 : 0)
        var size: Int32 = 0
        let p = gdImageJpegPtr(im, &size, quality)!
        defer { gdFree(p) }
        return [UInt8](UnsafeRawBufferPointer(start: p, count: Int(size)))
    }
    func png() -> [UInt8] {
        var size: Int32 = 0
        let p = gdImagePngPtr(im, &size)!
        defer { gdFree(p) }
        return [UInt8](UnsafeRawBufferPointer(start: p, count: Int(size)))
    }
}

/// A private temporary directory, removed on deinit.
private final class ITTempDir {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("imaging-tests-\(UUID().uuidString)", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func write(_ bytes: [UInt8], _ name: String = "photo.jpg") -> String {
        let path = url.appendingPathComponent(name).path
        precondition(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "cannot write \(path)")
        return path
    }
}

/// An APP1 Exif segment (marker included) whose IFD0 holds `entries` and an
/// Orientation entry, in the given byte order.
private func exifSegment(orientation: UInt16, bigEndian: Bool, extraEntriesBefore: Int = 0) -> [UInt8] {
    func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
    func u32(_ v: UInt32) -> [UInt8] {
        let b = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
        return bigEndian ? b : b.reversed()
    }
    var tiff: [UInt8] = bigEndian ? Array("MM".utf8) : Array("II".utf8)
    tiff += u16(42) + u32(8)
    tiff += u16(UInt16(extraEntriesBefore + 1))
    for i in 0..<extraEntriesBefore {  // e.g. ImageWidth-like SHORT entries before 0x0112
        tiff += u16(0x0100 + UInt16(i)) + u16(3) + u32(1) + u16(640) + [0, 0]
    }
    tiff += u16(0x0112) + u16(3) + u32(1) + u16(orientation) + [0, 0]
    tiff += u32(0)  // no next IFD
    let payload = Array("Exif".utf8) + [0, 0] + tiff
    let length = payload.count + 2
    return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
}

/// `jpeg` with `segment` inserted right after SOI.
private func inserting(_ segment: [UInt8], into jpeg: [UInt8]) -> [UInt8] {
    precondition(jpeg[0] == 0xFF && jpeg[1] == 0xD8)
    return Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
}

/// Index of the first SOFn marker (FFC0...FFC2) in a gd-written JPEG.
private func sofIndex(_ jpeg: [UInt8]) -> Int {
    var i = 2
    while i + 4 < jpeg.count {
        precondition(jpeg[i] == 0xFF)
        let marker = jpeg[i + 1]
        if (0xC0...0xC2).contains(marker) { return i }
        let len = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
        i += 2 + len
    }
    fatalError("no SOF")
}

/// Index just after the SOS header (start of the entropy-coded data).
private func scanDataIndex(_ jpeg: [UInt8]) -> Int {
    var i = 2
    while i + 4 < jpeg.count {
        let marker = jpeg[i + 1]
        let len = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
        if marker == 0xDA { return i + 2 + len }
        i += 2 + len
    }
    fatalError("no SOS")
}

/// The same JPEG with SOF claiming width x height.
private func withDeclaredSize(_ jpeg: [UInt8], width: Int, height: Int) -> [UInt8] {
    var j = jpeg
    let s = sofIndex(j)  // FF Cn len(2) precision(1) height(2) width(2)
    j[s + 5] = UInt8(height >> 8); j[s + 6] = UInt8(height & 0xFF)
    j[s + 7] = UInt8(width >> 8); j[s + 8] = UInt8(width & 0xFF)
    return j
}

/// Colour names at the centres of the thumbnail's four quadrants: TL, TR, BL, BR.
private func quadrants(_ thumb: ITCanvas, palette: [(String, ITColor)]) -> [String] {
    let a = thumb.width / 4, b = 3 * thumb.width / 4
    return [(a, a), (b, a), (a, b), (b, b)].map { (x, y) in
        let c = thumb.average(x, y)
        return palette.first { $0.1.isClose(to: c) }?.0 ?? "?\(c)"
    }
}

private let grayJPEGBase64 = """
/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAYEBQYFBAYGBQYHBwYIChAKCgkJChQODwwQFxQYGBcUFhYaHSUfGhsjHBYWICwgIyYn\
KSopGR8tMC0oMCUoKSj/wAALCAAgADABAREA/8QAFgABAQEAAAAAAAAAAAAAAAAAAAcI/8QAFxAAAwEAAAAAAAAAAAAAAAAAABVi\
of/aAAgBAQAAPwDQb6w+sPrD6w+sPrJO+rQ+rQ+rQ+rQ+rQ+rSTvq0Pq0Pq0Pq0Pq0Pq0lD6w+sPrD6w+sPrP//Z
"""
// convert-im6.q16 -size 48x32 gradient:white-black -colorspace Gray -quality 80 gray.jpg

private let ycckJPEGBase64 = """
/9j/7gAOQWRvYmUAZAAAAAAC/9sAQwAFAwQEBAMFBAQEBQUFBgcMCAcHBwcPCwsJDBEPEhIRDxERExYcFxMUGhURERghGBodHR8f\
HxMXIiQiHiQcHh8e/9sAQwEFBQUHBgcOCAgOHhQRFB4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4e\
Hh4eHh4e/8AAFAgAIAAwBAEiAAIRAQMRAQQiAP/EABYAAQEBAAAAAAAAAAAAAAAAAAAHCP/EABQQAQAAAAAAAAAAAAAAAAAAAAD/\
xAAWAQEBAQAAAAAAAAAAAAAAAAAIBwn/xAAYEQEAAwEAAAAAAAAAAAAAAAAAB0SDw//aAA4EAQACEQMRBAAAPwCpAKKGTZYApaaK\
WO0+0Nea7wlez6AAAOy8ACaANEgQABS00Usdp9oa813hK9n0AAAdl4AH/9k=
"""
// convert-im6.q16 -size 24x32 xc:'#ff0000' xc:'#0000ff' +append -colorspace CMYK -quality 85 cmyk.jpg
// (Adobe APP14 with transform 2: YCCK, inverted CMYK)

private func fixtureBytes(_ s: String) -> [UInt8] { [UInt8](Data(base64Encoded: s)!) }

private let fourColours: [(String, ITColor)] = [("red", .red), ("green", .green), ("blue", .blue), ("yellow", .yellow)]

/// A width x height picture in four quadrants: red | green over blue | yellow.
private func quadrantPicture(_ width: Int, _ height: Int) -> ITCanvas {
    let c = ITCanvas(width, height)
    c.rect(0, 0, width / 2, height / 2, .red)
    c.rect(width / 2, 0, width - width / 2, height / 2, .green)
    c.rect(0, height / 2, width / 2, height - height / 2, .blue)
    c.rect(width / 2, height / 2, width - width / 2, height - height / 2, .yellow)
    return c
}

private func expectJPEGError(_ body: () throws -> some Any, _ check: (JPEGImageError) -> Bool,
                 sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        _ = try body()
        Issue.record("expected an error, got a result", sourceLocation: sourceLocation)
    } catch let e as JPEGImageError {
        #expect(check(e), "unexpected error: \(e)", sourceLocation: sourceLocation)
        #expect(!e.description.isEmpty, sourceLocation: sourceLocation)
    } catch {
        Issue.record("not a JPEGImageError: \(error)", sourceLocation: sourceLocation)
    }
}

/// `body`'s wall-clock and this thread's CPU milliseconds: a decode costs CPU
/// however busy the machine is; waiting for a core costs none.
private func timed(_ body: () -> Void) -> (wall: Double, cpu: Double) {
    let (wall, cpu) = (MicroBenchmark.now(CLOCK_MONOTONIC), MicroBenchmark.now(CLOCK_THREAD_CPUTIME_ID))
    body()
    return (MicroBenchmark.now(CLOCK_MONOTONIC) - wall, MicroBenchmark.now(CLOCK_THREAD_CPUTIME_ID) - cpu)
}

// MARK: - tests

@Suite struct ImagingTests {
    let thumbnailer = Thumbnailer()
    let limit = 50_000_000

    @Test func defaults() {
        #expect(thumbnailer.side == 180)
        #expect(thumbnailer.quality == 85)
    }

    @Test(arguments: [(640, 640), (4032, 3024), (3024, 4032), (1080, 1920), (10, 10), (181, 179), (1, 1)])
    func thumbnailIs180SquareAndCentreCropped(width: Int, height: Int) throws {
        // Green bands outside the centre square, red | blue inside it.
        let crop = min(width, height)
        let x0 = (width - crop) / 2, y0 = (height - crop) / 2
        let c = ITCanvas(width, height, fill: .green)
        c.rect(x0, y0, crop / 2, crop, .red)
        c.rect(x0 + crop / 2, y0, crop - crop / 2, crop, .blue)
        let dir = ITTempDir()
        let path = dir.write(c.jpeg())

        let result = try thumbnailer.thumbnail(ofFileAt: path, maxPixels: limit)
        #expect(result.source == JPEGHeader(width: width, height: height, components: 3,
                                            orientation: 1, isProgressive: false))
        #expect(Array(result.jpeg.prefix(2)) == [0xFF, 0xD8])
        let thumb = try #require(ITCanvas(jpeg: result.jpeg))
        #expect(thumb.width == 180 && thumb.height == 180)
        if crop >= 2 {
            // Left of the thumbnail red, right blue, nothing green anywhere near the edges.
            #expect(thumb.average(45, 90).isClose(to: .red), "\(thumb.average(45, 90))")
            #expect(thumb.average(135, 90).isClose(to: .blue), "\(thumb.average(135, 90))")
            for (x, y) in [(6, 6), (6, 173), (173, 6), (173, 173), (6, 90), (173, 90), (45, 6), (135, 173)] {
                let p = thumb.average(x, y, radius: 2)
                #expect(p.g < 80, "green at (\(x),\(y)): \(p) for \(width)x\(height)")
            }
        }
        // Same bytes through the convenience API.
        #expect(try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit) == result.jpeg)
    }

    @Test func decodeUsesDCTScalingKeepingShortSideAtLeast180() throws {
        let dir = ITTempDir()
        // 3/8 is passed over for 4/8 (faster, SIMD): 640x640 at 4/8, not 240x240.
        for (w, h, expectedNum, ew, eh) in [(4032, 3024, 1, 504, 378), (640, 640, 4, 320, 320), (1000, 700, 4, 500, 350),
                                            (716, 1000, 4, 358, 500), (717, 1000, 2, 180, 250), (1440, 1440, 1, 180, 180),
                                            (1439, 2000, 1, 180, 250), (1431, 2000, 2, 358, 500),
                                            (100, 50, 8, 100, 50)] {
            let path = dir.write(ITCanvas(w, h).jpeg(), "s\(w).jpg")
            var info = ir_jpeg_info()
            var image: gdImagePtr? = nil
            let status = ir_jpeg_decode_scaled(path, 180, 0, 0, 0, &image, &info, nil, 0)
            #expect(status == IR_JPEG_OK)
            #expect(info.scale_num == Int32(expectedNum), "\(w)x\(h)")
            #expect(info.scaled_width == Int32(ew) && info.scaled_height == Int32(eh), "\(w)x\(h)")
            let im = try #require(image)
            #expect(ir_gd_sx(im) == Int32(ew) && ir_gd_sy(im) == Int32(eh))
            // Opaque: gd alpha 0 everywhere we look (the X byte was cleared).
            #expect(ir_gd_alpha(ir_gd_truecolor_pixel(im, 0, 0)) == 0)
            #expect(ir_gd_alpha(ir_gd_truecolor_pixel(im, Int32(ew - 1), Int32(eh - 1))) == 0)
            gdImageDestroy(im)
        }
    }

    @Test func resamplingAveragesDetailFinerThanAThumbnailPixel() throws {
        // 8-pixel black/white columns, aligned to the 8x8 blocks: the 1/8 DCT
        // decode keeps them as 1-pixel columns (300x250), which the 250 -> 180
        // step must average to greys. Point sampling (CopyResized) or a
        // bilinear filter without a widened support leaves black and white.
        let c = ITCanvas(2400, 2000, fill: ITColor(r: 0, g: 0, b: 0))
        for x in stride(from: 8, to: 2400, by: 16) { c.rect(x, 0, 8, 2000, ITColor(r: 255, g: 255, b: 255)) }
        let dir = ITTempDir()
        let path = dir.write(c.jpeg(quality: 95))
        let thumb = try #require(ITCanvas(jpeg: try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit)))
        var extremes = 0
        for y in stride(from: 20, to: 160, by: 7) {
            for x in 10..<170 where !(35...220).contains(thumb.pixel(x, y).g) { extremes += 1 }
        }
        #expect(extremes == 0, "\(extremes) near-black or near-white pixels")
    }

    @Test(arguments: [(240, 180), (377, 180), (180, 180), (100, 180), (5, 3)])
    func resamplingKeepsAFlatColourExactly(from: Int, to: Int) throws {
        // The weights of each output pixel sum to exactly one (fixed point):
        // a flat colour, alpha included, comes out unchanged at any ratio.
        let image = try #require(gdImageCreateTrueColor(Int32(from), Int32(from + 7)))
        defer { gdImageDestroy(image) }
        gdImageAlphaBlending(image, 0)
        gdImageFilledRectangle(image, 0, 0, Int32(from), Int32(from + 7), 0x2A_C8_64_0F)
        let scaled = try #require(ir_resample_triangle(image, 0, 3, Int32(from), Int32(from), Int32(to), Int32(to)))
        defer { gdImageDestroy(scaled) }
        for y in 0..<to { for x in 0..<to { #expect(ir_gd_truecolor_pixel(scaled, Int32(x), Int32(y)) == 0x2A_C8_64_0F) } }
        #expect(ir_resample_triangle(image, 1, 0, Int32(from), Int32(from), 10, 10) == nil, "a rectangle outside the image")
    }

    @Test func resamplingGivesThePixelsOfThePlainLoops() throws {
        // Noise through seven rectangles and ratios, hashed (FNV-1a over each
        // pixel's bytes). The hash is the plain C loops' (before the SSE2
        // passes, and still what other targets compile): the vector passes
        // must sum the same integers, not merely look alike.
        let cases: [(side: Int32, to: Int32, x: Int32, y: Int32, w: Int32, h: Int32)] = [
            (240, 180, 0, 0, 240, 240), (377, 180, 3, 1, 371, 370), (180, 180, 0, 0, 180, 180), (100, 180, 0, 0, 100, 100),
            (5, 3, 0, 0, 5, 5), (641, 97, 1, 2, 633, 629), (300, 181, 0, 0, 300, 250)]
        var state: UInt32 = 12345
        var hash: UInt64 = 14_695_981_039_346_656_037
        for (index, c) in cases.enumerated() {
            let image = try #require(gdImageCreateTrueColor(c.side + 3, c.side + 3))
            defer { gdImageDestroy(image) }
            gdImageAlphaBlending(image, 0)
            for y in 0..<(c.side + 3) {
                for x in 0..<(c.side + 3) {
                    state = state &* 1_664_525 &+ 1_013_904_223
                    gdImageSetPixel(image, x, y, Int32(bitPattern: (state >> 1) & 0x7FFF_FFFF))
                }
            }
            let scaled = try #require(ir_resample_triangle(image, c.x, c.y, c.w, c.h, c.to, c.to + Int32(index)))
            defer { gdImageDestroy(scaled) }
            for y in 0..<ir_gd_sy(scaled) {
                for x in 0..<ir_gd_sx(scaled) {
                    let pixel = UInt32(bitPattern: ir_gd_truecolor_pixel(scaled, x, y))
                    for byte in 0..<4 { hash = (hash ^ UInt64((pixel >> (8 * byte)) & 0xFF)) &* 1_099_511_628_211 }
                }
            }
        }
        #expect(String(hash, radix: 16) == "f0b6a5e05f110608")
    }

    @Test func progressiveJPEGWorks() throws {
        let c = quadrantPicture(800, 600)
        let dir = ITTempDir()
        let bytes = c.jpeg(progressive: true)
        let path = dir.write(bytes)
        let r = try thumbnailer.thumbnail(ofFileAt: path, maxPixels: limit)
        #expect(r.source.isProgressive)
        let thumb = try #require(ITCanvas(jpeg: r.jpeg))
        #expect(quadrants(thumb, palette: fourColours) == ["red", "green", "blue", "yellow"])
        // ...and truncated, it fails.
        let cut = dir.write(Array(bytes.prefix(bytes.count * 2 / 3)), "cut.jpg")
        expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: cut, maxPixels: limit) }) {
            if case .truncatedOrCorrupt = $0 { true } else { false }
        }
    }

    @Test func grayscaleJPEG() throws {
        let dir = ITTempDir()
        let path = dir.write(fixtureBytes(grayJPEGBase64))
        let header = try Thumbnailer.readHeader(ofFileAt: path)
        #expect(header.width == 48 && header.height == 32 && header.components == 1)
        let thumb = try #require(ITCanvas(jpeg: try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit)))
        #expect(thumb.width == 180 && thumb.height == 180)
        let top = thumb.average(90, 20), bottom = thumb.average(90, 160)
        #expect(top.r > bottom.r + 100, "white-to-black gradient: \(top) / \(bottom)")
        for p in [top, bottom] { #expect(abs(p.r - p.g) <= 6 && abs(p.g - p.b) <= 6, "\(p) not gray") }
    }

    @Test func adobeYCCKJPEG() throws {
        let dir = ITTempDir()
        let path = dir.write(fixtureBytes(ycckJPEGBase64))
        let header = try Thumbnailer.readHeader(ofFileAt: path)
        #expect(header.components == 4)
        let thumb = try #require(ITCanvas(jpeg: try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit)))
        #expect(thumb.average(45, 90).isClose(to: .red, tolerance: 60), "\(thumb.average(45, 90))")
        #expect(thumb.average(135, 90).isClose(to: .blue, tolerance: 60), "\(thumb.average(135, 90))")
    }

    // MARK: orientation

    @Test(arguments: [false, true])
    func exifOrientation6RotatesClockwise(bigEndian: Bool) throws {
        // Left half red, right half blue; orientation 6 = turn 90° clockwise
        // to display, so red ends up on top and blue at the bottom.
        let c = ITCanvas(640, 480, fill: .red)
        c.rect(320, 0, 320, 480, .blue)
        let dir = ITTempDir()
        let path = dir.write(inserting(exifSegment(orientation: 6, bigEndian: bigEndian), into: c.jpeg()))
        let header = try Thumbnailer.readHeader(ofFileAt: path)
        #expect(header.orientation == 6)
        #expect(header.width == 640 && header.height == 480)
        #expect(header.displayWidth == 480 && header.displayHeight == 640)
        let r = try thumbnailer.thumbnail(ofFileAt: path, maxPixels: limit)
        #expect(r.source.orientation == 6)
        let thumb = try #require(ITCanvas(jpeg: r.jpeg))
        #expect(thumb.average(90, 45).isClose(to: .red), "top: \(thumb.average(90, 45))")
        #expect(thumb.average(90, 135).isClose(to: .blue), "bottom: \(thumb.average(90, 135))")
    }

    @Test(arguments: Array(1...8))
    func everyEXIFOrientationIsApplied(orientation: Int) throws {
        // Source quadrants TL red, TR green, BL blue, BR yellow; where each
        // quadrant (u, v) lands on display for each orientation.
        let source = [("red", 0, 0), ("green", 1, 0), ("blue", 0, 1), ("yellow", 1, 1)]
        func display(_ u: Int, _ v: Int) -> (Int, Int) {
            switch orientation {
            case 2: (1 - u, v)          // mirror
            case 3: (1 - u, 1 - v)      // 180°
            case 4: (u, 1 - v)          // flip
            case 5: (v, u)              // transpose
            case 6: (1 - v, u)          // 90° clockwise
            case 7: (1 - v, 1 - u)      // transverse
            case 8: (v, 1 - u)          // 90° anticlockwise
            default: (u, v)
            }
        }
        var expected = [String](repeating: "", count: 4)
        for (name, u, v) in source {
            let (x, y) = display(u, v)
            expected[y * 2 + x] = name
        }
        let dir = ITTempDir()
        for bigEndian in [false, true] {
            let jpeg = inserting(exifSegment(orientation: UInt16(orientation), bigEndian: bigEndian,
                                             extraEntriesBefore: 3),
                                 into: quadrantPicture(640, 480).jpeg())
            let path = dir.write(jpeg, "o\(orientation)\(bigEndian).jpg")
            let thumb = try #require(ITCanvas(jpeg: try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit)))
            #expect(quadrants(thumb, palette: fourColours) == expected,
                    "orientation \(orientation), big endian \(bigEndian)")
        }
    }

    @Test func invalidOrientationValuesMeanUpright() throws {
        let dir = ITTempDir()
        for value: UInt16 in [0, 9, 0xFFFF] {
            let path = dir.write(inserting(exifSegment(orientation: value, bigEndian: true),
                                           into: quadrantPicture(64, 64).jpeg()), "v\(value).jpg")
            #expect(try Thumbnailer.readHeader(ofFileAt: path).orientation == 1)
        }
    }

    @Test func exifParserIsBoundsChecked() {
        let good = Array(exifSegment(orientation: 8, bigEndian: false, extraEntriesBefore: 2).dropFirst(4))
        #expect(good.withUnsafeBufferPointer { ir_exif_orientation($0.baseAddress, $0.count) } == 8)
        let goodBE = Array(exifSegment(orientation: 3, bigEndian: true).dropFirst(4))
        #expect(goodBE.withUnsafeBufferPointer { ir_exif_orientation($0.baseAddress, $0.count) } == 3)
        // Every truncation of a valid payload: never out of bounds, 1 once the entry is cut.
        for n in 0..<good.count {
            let v = good.withUnsafeBufferPointer { ir_exif_orientation($0.baseAddress, n) }
            #expect((1...8).contains(v))
            if n < good.count - 4 - 2 { #expect(v == 1, "prefix \(n) still found the tag") }
        }
        // IFD offset past the end, and an entry count far larger than the data.
        var badOffset = good
        badOffset[6 + 4] = 0xF0; badOffset[6 + 7] = 0x7F
        #expect(badOffset.withUnsafeBufferPointer { ir_exif_orientation($0.baseAddress, $0.count) } == 1)
        var hugeCount = Array(exifSegment(orientation: 6, bigEndian: true).dropFirst(4))
        hugeCount[6 + 8] = 0xFF; hugeCount[6 + 9] = 0xFF  // count 65535, first entry is still 0x0112
        #expect(hugeCount.withUnsafeBufferPointer { ir_exif_orientation($0.baseAddress, $0.count) } == 6)
        hugeCount[6 + 10] = 0x00; hugeCount[6 + 11] = 0x00  // and now it is not: scan must stop at the end
        #expect(hugeCount.withUnsafeBufferPointer { ir_exif_orientation($0.baseAddress, $0.count) } == 1)
        // Random junk behind a valid Exif/TIFF prefix.
        var s: UInt32 = 7
        for len in stride(from: 14, to: 200, by: 3) {
            var junk = Array(good.prefix(14))
            while junk.count < len { s = s &* 1_103_515_245 &+ 12345; junk.append(UInt8(truncatingIfNeeded: s >> 16)) }
            junk[10] = UInt8(truncatingIfNeeded: s); junk[11] = 0; junk[12] = 0; junk[13] = 0
            let v = junk.withUnsafeBufferPointer { ir_exif_orientation($0.baseAddress, $0.count) }
            #expect((1...8).contains(v))
        }
        #expect(ir_exif_orientation(nil, 0) == 1)
        let tiffOnly = Array("Exif".utf8) + [0, 0] + Array("XX".utf8) + [0, 42, 0, 0, 0, 8]
        #expect(tiffOnly.withUnsafeBufferPointer { ir_exif_orientation($0.baseAddress, $0.count) } == 1)
    }

    // MARK: rejection

    @Test func truncatedJPEGIsRejected() throws {
        let c = ITCanvas(640, 640)
        c.noise()
        let bytes = c.jpeg()
        let dir = ITTempDir()
        // Sanity: the whole file is fine.
        _ = try thumbnailer.thumbnailJPEG(ofFileAt: dir.write(bytes, "whole.jpg"), maxPixels: limit)
        for keep in [bytes.count / 2, bytes.count - 100, bytes.count - 2, 300] {
            let path = dir.write(Array(bytes.prefix(keep)), "cut\(keep).jpg")
            expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit) }) {
                guard case .truncatedOrCorrupt(let m) = $0 else { return false }
                return !m.isEmpty && $0.isInvalidImage
            }
        }
        // Only the SOI marker.
        let soi = dir.write([0xFF, 0xD8], "soi.jpg")
        expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: soi, maxPixels: limit) }) {
            if case .truncatedOrCorrupt = $0 { true } else { false }
        }
    }

    @Test func corruptedMiddleIsRejected() throws {
        let c = ITCanvas(640, 640)
        c.noise(seed: 99)
        let bytes = c.jpeg()
        let start = scanDataIndex(bytes)
        let mid = start + (bytes.count - start) / 2
        let dir = ITTempDir()
        var variants: [(String, [UInt8])] = []
        var ff = bytes; for i in mid..<(mid + 64) { ff[i] = 0xFF }  // 0xFF run = a bogus marker in the data
        variants.append(("ff-run", ff))
        var eoi = bytes; eoi[mid] = 0xFF; eoi[mid + 1] = 0xD9       // an EOI in the middle of the scan
        variants.append(("eoi", eoi))
        var cutOut = bytes; cutOut.removeSubrange(mid..<(mid + 2000))  // a hole: data ends early
        variants.append(("hole", cutOut))
        for (name, v) in variants {
            let path = dir.write(v, "\(name).jpg")
            expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit) }) {
                if case .truncatedOrCorrupt = $0 { true } else { false }
            }
        }
    }

    @Test func nonJPEGFilesAreRejected() throws {
        let dir = ITTempDir()
        let cases: [(String, [UInt8])] = [
            ("png", ITCanvas(32, 32).png()),
            ("text", Array("<?php echo 'hello'; ?>\n".utf8)),
            ("empty", []),
            ("one-byte", [0xFF]),
        ]
        for (name, bytes) in cases {
            let path = dir.write(bytes, "\(name).jpg")
            expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit) }) {
                switch $0 {
                case .notAJPEG: return true
                case .truncatedOrCorrupt: return name == "one-byte"  // 0xFF then EOF
                default: return false
                }
            }
            expectJPEGError({ try Thumbnailer.readHeader(ofFileAt: path) }) {
                $0.isInvalidImage
            }
        }
        let png = dir.write(ITCanvas(8, 8).png(), "x.png")
        expectJPEGError({ try Thumbnailer.readHeader(ofFileAt: png) }) {
            if case .notAJPEG(let m) = $0 { m.contains("0x89 0x50") } else { false }
        }
    }

    @Test func missingFilesAndDirectoriesAreUnreadable() {
        let dir = ITTempDir()
        for path in [dir.url.appendingPathComponent("nope.jpg").path, dir.url.path] {
            expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: 1000) }) {
                if case .unreadable = $0 { !$0.isInvalidImage } else { false }
            }
            expectJPEGError({ try Thumbnailer.readHeader(ofFileAt: path) }) {
                if case .unreadable = $0 { true } else { false }
            }
        }
    }

    @Test func decompressionBombIsRefusedBeforeDecoding() throws {
        let dir = ITTempDir()
        let bomb = withDeclaredSize(ITCanvas(64, 64).jpeg(), width: 50_000, height: 50_000)
        let path = dir.write(bomb)
        #expect(try Thumbnailer.readHeader(ofFileAt: path).width == 50_000)
        let elapsed = timed {
            expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit) }) {
                $0 == .tooManyPixels(width: 50_000, height: 50_000, limit: 50_000_000) && $0.isInvalidImage
            }
        }
        // A header read: well under a millisecond of CPU. Decoded, even at 1/8
        // it is 6250x6250 (59 M blocks, a 156 MB gd image): far more CPU. The
        // wall-clock bound is loose (a busy machine).
        #expect(elapsed.cpu < 20 && elapsed.wall < 1000, "took \(elapsed.wall) ms, \(elapsed.cpu) ms of CPU")
        // The limit is exact: width x height == maxPixels passes the check.
        let small = dir.write(ITCanvas(100, 50).jpeg(), "small.jpg")
        _ = try thumbnailer.thumbnailJPEG(ofFileAt: small, maxPixels: 5000)
        expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: small, maxPixels: 4999) }) {
            $0 == .tooManyPixels(width: 100, height: 50, limit: 4999)
        }
        // A lower limit refuses it too.
        expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: 12_000_000) }) {
            if case .tooManyPixels = $0 { true } else { false }
        }
    }

    /// The header of a file with one `marker` frame (SOF2 progressive, SOF9
    /// arithmetic, ...) of `components` at 1x1 sampling, and its first scan:
    /// all that libjpeg reads before the checks, no image data after it.
    private func frameHeader(marker: UInt8, width: Int, height: Int, components: Int) -> [UInt8] {
        var sof: [UInt8] = [0xFF, marker, 0, UInt8(8 + 3 * components), 8,
                            UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
                            UInt8(components)]
        for id in 1...components { sof += [UInt8(id), 0x11, 0] }
        let dqt: [UInt8] = [0xFF, 0xDB, 0, 67, 0] + [UInt8](repeating: 1, count: 64)
        let sos: [UInt8] = [0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 0, 0]
        return [0xFF, 0xD8] + dqt + sof + sos + [UInt8](repeating: 0, count: 64) + [0xFF, 0xD9]
    }

    /// A progressive file keeps every coefficient: 7071x7071 CMYK in 415 KB
    /// took 395 MB to decode. Refused from its header, before any of it.
    @Test func progressiveMemoryBombIsRefusedBeforeDecoding() throws {
        let dir = ITTempDir()
        let path = dir.write(frameHeader(marker: 0xC2, width: 7071, height: 7071, components: 4))
        let bytes = 884 * 884 * 4 * 128  // blocks (7071 / 8, rounded up) x components x 64 coefficients of 2 bytes
        let elapsed = timed {
            expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit) }) {
                $0 == .needsTooMuchMemory(width: 7071, height: 7071, bytes: bytes, limit: 128 << 20) && $0.isInvalidImage
            }
        }
        // Refused from the header: well under a millisecond of CPU. Taking
        // libjpeg's 400 MB of coefficients (faulted in and zeroed) alone
        // would cost 100 ms of it or more. The wall-clock bound is loose.
        #expect(elapsed.cpu < 20 && elapsed.wall < 1000, "took \(elapsed.wall) ms, \(elapsed.cpu) ms of CPU")
    }

    /// A 12 MP phone photo, progressive (gd writes 4:2:0), passes the default
    /// limit; the limit is exact.
    @Test func progressivePhoneSizedPhotoPasses() throws {
        let dir = ITTempDir()
        let path = dir.write(ITCanvas(4000, 3000, fill: .green).jpeg(quality: 80, progressive: true))
        let header = try Thumbnailer.readHeader(ofFileAt: path)
        #expect(header.isProgressive)
        _ = try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit)
        // Y: 500x375 blocks, rounded up to whole MCUs (2x2 blocks): 500x376;
        // Cb, Cr: 250x188 (half, rounded up); 128 bytes a block.
        let needed = (500 * 376 + 2 * 250 * 188) * 128
        _ = try Thumbnailer(maxDecodeBytes: needed).thumbnailJPEG(ofFileAt: path, maxPixels: limit)
        expectJPEGError({ try Thumbnailer(maxDecodeBytes: needed - 1).thumbnailJPEG(ofFileAt: path, maxPixels: limit) }) {
            $0 == .needsTooMuchMemory(width: 4000, height: 3000, bytes: needed, limit: needed - 1)
        }
        // A baseline photo is decoded a few rows at a time: no such limit.
        let baseline = dir.write(ITCanvas(4000, 3000, fill: .green).jpeg(quality: 80), "baseline.jpg")
        _ = try Thumbnailer(maxDecodeBytes: 1 << 20).thumbnailJPEG(ofFileAt: baseline, maxPixels: limit)
    }

    /// No camera writes arithmetic coding, and the rest of the pipeline reads
    /// Huffman-coded files only: a baseline file relabelled SOF9 is refused.
    @Test(arguments: [UInt8(0xC9), 0xCA])
    func arithmeticCodingIsRefused(marker: UInt8) throws {
        let dir = ITTempDir()
        let path = dir.write(frameHeader(marker: marker, width: 64, height: 64, components: 3))
        expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit) }) {
            if case .unsupported(let m) = $0 { m.contains("arithmetic") } else { false }
        }
    }

    @Test func lyingSmallerHeaderIsRejected() throws {
        // SOF says 64x64 but the scan holds 640x640 worth of data: libjpeg
        // stops early and the leftover data is a warning -> error.
        let c = ITCanvas(640, 640)
        c.noise()
        let dir = ITTempDir()
        let path = dir.write(withDeclaredSize(c.jpeg(), width: 64, height: 64))
        expectJPEGError({ try thumbnailer.thumbnailJPEG(ofFileAt: path, maxPixels: limit) }) {
            if case .truncatedOrCorrupt = $0 { true } else { false }
        }
    }

    @Test func concurrentCallsGiveIdenticalResults() throws {
        let dir = ITTempDir()
        let paths = (0..<4).map { i -> String in
            let c = quadrantPicture(1200 + 100 * i, 900)
            return dir.write(inserting(exifSegment(orientation: UInt16(i * 2 + 1), bigEndian: i % 2 == 0),
                                       into: c.jpeg()), "c\(i).jpg")
        }
        let t = thumbnailer
        let expected = try paths.map { try t.thumbnailJPEG(ofFileAt: $0, maxPixels: limit) }
        let results = ITLock<[Int: [UInt8]]>([:])
        DispatchQueue.concurrentPerform(iterations: 32) { i in
            let bytes = try? t.thumbnailJPEG(ofFileAt: paths[i % 4], maxPixels: limit)
            results.withLock { if $0[i % 4] == nil || $0[i % 4] == bytes { $0[i % 4] = bytes ?? [] } else { $0[-1] = [] } }
        }
        let got = results.withLock { $0 }
        #expect(got[-1] == nil, "two runs of the same file differed")
        for i in 0..<4 { #expect(got[i] == expected[i]) }
    }
}

/// Minimal lock for the concurrency test (Synchronization.ITLock is not
/// Sendable-friendly to capture from concurrentPerform's closure here).
private final class ITLock<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock(); defer { lock.unlock() }
        return body(&value)
    }
}
