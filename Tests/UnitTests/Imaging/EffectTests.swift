#if canImport(Glibc)
import Glibc
#endif
import CGD
import CJpegScale
import Testing
@testable import IReporterKit
import TestSupport

/// Each effect against its reference image (EffectReferences/<effect>.png,
/// looked at by a person when it was recorded): the effect applied to the
/// same synthetic picture must give the same pixels, within 2 levels per
/// channel (gd's filters use floating point). To record them again after a
/// deliberate change: IREPORTER_RECORD_EFFECTS=1 swift test --filter EffectTests.
struct EffectTests {
    static let references: String = {
        var path = #filePath
        path = String(path[..<path.lastIndex(of: "/")!])
        return path + "/EffectReferences"
    }()

    /// 96x64: hue across, lightness down, a white and a black block (contrast and tints show on all of them).
    static func picture() -> GDImage {
        let image = GDImage(trueColorWidth: 96, height: 64)!
        for y in 0..<64 {
            for x in 0..<96 {
                let r = x * 255 / 95, g = (95 - x) * 255 / 95, b = y * 255 / 63
                gdImageSetPixel(image.pointer, Int32(x), Int32(y), ir_gd_truecolor(Int32(r), Int32(g), Int32(b)))
            }
        }
        gdImageFilledRectangle(image.pointer, 8, 8, 23, 23, ir_gd_truecolor(255, 255, 255))
        gdImageFilledRectangle(image.pointer, 72, 40, 87, 55, ir_gd_truecolor(0, 0, 0))
        return image
    }

    static func png(_ image: GDImage) -> [UInt8] {
        var size: Int32 = 0
        let data = gdImagePngPtr(image.pointer, &size)!
        defer { gdFree(data) }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
    }

    static func pixels(_ image: GDImage) -> [Int32] {
        (0..<image.height).flatMap { y in (0..<image.width).map { x in ir_gd_truecolor_pixel(image.pointer, Int32(x), Int32(y)) } }
    }

    @Test(arguments: PhotoEffect.allCases)
    func matchesItsReferenceImage(_ effect: PhotoEffect) throws {
        let image = Self.picture()
        #expect(effect.apply(to: image))
        let path = "\(Self.references)/\(effect.rawValue).png"
        if getenv("IREPORTER_RECORD_EFFECTS") != nil {
            let file = fopen(path, "wb")!
            let bytes = Self.png(image)
            _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
        }
        var reference = try #require(readFile(path), "no reference image \(path): record it")
        let decoded = try #require(reference.withUnsafeMutableBytes { gdImageCreateFromPngPtr(Int32($0.count), $0.baseAddress) })
        let expected = GDImage(owning: decoded)
        #expect((expected.width, expected.height) == (96, 64))
        let worst = zip(Self.pixels(image), Self.pixels(expected)).map { got, want in
            [ir_gd_red, ir_gd_green, ir_gd_blue].map { abs($0(got) - $0(want)) }.max()!
        }.max()!
        #expect(worst <= 2, "\(effect): a channel differs by \(worst) from the reference")
        #expect(Self.pixels(image) != Self.pixels(Self.picture()), "\(effect) changed nothing")
    }

    @Test func anUploadIsDecodedOnceAndRenderedUprightWithItsThumbnail() throws {
        let scratch = ScratchDirectory("effects")
        let path = scratch.write("photo.jpg", makeJPEG(width: 640, height: 480))
        let rendered = try EffectRenderer().render(fileAt: path, effect: .mono, maxPixels: 50_000_000)
        #expect((rendered.width, rendered.height) == (640, 480))
        #expect(jpegSize(rendered.photo)! == (640, 480))
        #expect(jpegSize(rendered.thumbnail)! == (180, 180))
        let preview = try EffectRenderer().preview(fileAt: path, effect: .sepia, maxPixels: 50_000_000)
        #expect(jpegSize(preview)! == (640, 480), "never scaled up")
        #expect(throws: JPEGImageError.self) {
            try EffectRenderer().render(fileAt: path, effect: .mono, maxPixels: 1000)
        }
    }

    /// An effect's working copies (12 bytes a pixel) stay within the decode
    /// memory: a photo whose copies would take more is rendered smaller, at
    /// the largest DCT scale that fits (a 7000x7000 photo of 191 KB took 400-600
    /// MB at full size, outside `max_decode_memory_mib`, in a review).
    @Test func anEffectIsRenderedWithinTheDecodeMemory() throws {
        let scratch = ScratchDirectory("effects")
        let path = scratch.write("photo.jpg", makeJPEG(width: 1600, height: 1200))
        let fits = EffectRenderer(thumbnailer: Thumbnailer(maxDecodeBytes: 1600 * 1200 * 12))
        #expect(try fits.render(fileAt: path, effect: .blur, maxPixels: 50_000_000).width == 1600)
        // 8 MiB: 5/8 (1000x750, 9 MB) is over, 4/8 (800x600, 5.8 MB) fits.
        let small = EffectRenderer(thumbnailer: Thumbnailer(maxDecodeBytes: 8 << 20))
        let rendered = try small.render(fileAt: path, effect: .blur, maxPixels: 50_000_000)
        #expect((rendered.width, rendered.height) == (800, 600))
        #expect(jpegSize(rendered.photo)! == (800, 600))
        #expect(jpegSize(rendered.thumbnail)! == (180, 180))
        #expect(EffectRenderer.renderedScale(width: 4000, height: 3000, memoryLimit: 128 << 20) == 7, "12 MP at 7/8")
        #expect(EffectRenderer.renderedScale(width: 7000, height: 7000, memoryLimit: 128 << 20) == 2, "49 MP: 4/8 over, 3/8 passed over, 2/8")
        #expect(EffectRenderer.renderedScale(width: 100_000, height: 100_000, memoryLimit: 1) == 1, "1/8 at least")
        #expect(EffectRenderer.renderedScale(width: 4000, height: 3000, memoryLimit: 0) == 8, "no limit")
        // A photo a few pixels high at full size: several scales give its short side, the smallest would win it.
        let thin = scratch.write("thin.jpg", makeJPEG(width: 2000, height: 4))
        #expect(try EffectRenderer().render(fileAt: thin, effect: .sepia, maxPixels: 50_000_000).width == 2000)
    }
}
