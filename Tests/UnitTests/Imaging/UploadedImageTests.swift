import Testing
@testable import IReporterKit
import TestSupport

/// A media upload's kind by its first bytes, and its size read from the
/// header before anything is decoded (PNG's IHDR, HEIF's `ispe`).
struct UploadedImageTests {
    func box(_ type: String, _ contents: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + contents.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + Array(type.utf8) + contents
    }

    func ispe(_ width: UInt32, _ height: UInt32) -> [UInt8] {
        func bytes(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(value >> $0 & 0xFF) } }
        return box("ispe", [0, 0, 0, 0] + bytes(width) + bytes(height))
    }

    @Test func theKindIsReadFromTheBytes() {
        #expect(UploadedImage.format(of: makeJPEG(width: 8, height: 8)) == .jpeg)
        #expect(UploadedImage.format(of: makePNG(width: 8, height: 8)) == .png)
        #expect(UploadedImage.format(of: box("ftyp", Array("heic".utf8) + [0, 0, 0, 0])) == .heic)
        #expect(UploadedImage.format(of: box("ftyp", Array("isom".utf8) + [0, 0, 0, 0])) == .other, "an MP4 is no photo")
        #expect(UploadedImage.format(of: Array("GIF89a".utf8)) == .other)
        #expect(UploadedImage.format(of: []) == .other)
    }

    @Test func sizesComeFromTheHeaders() {
        #expect(UploadedImage.pngSize(makePNG(width: 40, height: 30)).map { [$0.width, $0.height] } == [40, 30])
        #expect(UploadedImage.pngSize(Array(makePNG(width: 40, height: 30).prefix(20))) == nil)
        // The grid's ispe, larger than its tiles': the largest counts; one in `mdat` does not.
        let heif = box("ftyp", Array("heic".utf8) + [0, 0, 0, 0])
            + box("meta", [0, 0, 0, 0] + box("iprp", box("ipco", ispe(512, 512) + ispe(4032, 3024))))
            + box("mdat", ispe(100_000, 100_000))
        #expect(UploadedImage.heifSize(heif).map { [$0.width, $0.height] } == [4032, 3024])
        #expect(UploadedImage.heifSize(box("ftyp", Array("heic".utf8)) + box("mdat", ispe(8, 8))) == nil, "no meta, no size")
    }

    @Test func tooManyPixelsAreRefusedBeforeDecoding() throws {
        #expect(throws: UploadedImage.Failure.tooManyPixels) {
            try UploadedImage.jpeg(of: makePNG(width: 40, height: 30), format: .png, maxPixels: 1199)
        }
        #expect(throws: UploadedImage.Failure.unreadable(.png)) {
            try UploadedImage.jpeg(of: Array(makePNG(width: 40, height: 30).prefix(60)), format: .png, maxPixels: 10_000)
        }
        #expect(jpegSize(try UploadedImage.jpeg(of: makePNG(width: 40, height: 30), format: .png, maxPixels: 1200)).map { [$0.0, $0.1] }
                == [40, 30])
    }

    /// Sides up to 2^32 - 1 each, as a hostile header says: their product
    /// overflows Int, which trapped (a worker killed by 24 bytes).
    @Test func sidesWhoseProductOverflowsAreTooManyPixels() {
        var png = makePNG(width: 40, height: 30)
        png.replaceSubrange(16..<24, with: [UInt8](repeating: 0xFF, count: 8))
        #expect(throws: UploadedImage.Failure.tooManyPixels) {
            try UploadedImage.jpeg(of: png, format: .png, maxPixels: 100_000_000)
        }
        let heif = box("ftyp", Array("heic".utf8) + [0, 0, 0, 0])
            + box("meta", [0, 0, 0, 0] + box("iprp", box("ipco", ispe(512, 512) + ispe(.max, .max) + ispe(.max, 3))))
        #expect(UploadedImage.heifSize(heif).map { [$0.width, $0.height] } == [Int(UInt32.max), Int(UInt32.max)])
        #expect(UploadedImage.pixels((Int(UInt32.max), Int(UInt32.max))) == .max)
    }
}
