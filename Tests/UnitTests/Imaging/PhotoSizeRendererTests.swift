import Testing
import TestSupport
@testable import IReporterKit

/// Each of Flickr's sizes of a photo: the box or the square, never enlarged.
struct PhotoSizeRendererTests {
    @Test func everySizeOfALandscapeAndAPortraitPhoto() throws {
        let scratch = ScratchDirectory("render")
        let renderer = PhotoSizeRenderer()
        for (width, height) in [(1600, 1200), (900, 1200)] {
            let path = scratch.write("\(width).jpg", makeJPEG(width: Int32(width), height: Int32(height)))
            for size in PhotoSize.allCases where size != .original {
                let rendered = try renderer.render(size, ofFileAt: path, maxPixels: 0)
                let expected = size.dimensions(ofPhoto: width, height)
                #expect(jpegSize(rendered.jpeg)! == expected, "\(size) of \(width)x\(height)")
                #expect(rendered.width == expected.width && rendered.height == expected.height)
            }
        }
    }

    @Test func notAJPEGIsTheImagesError() {
        let scratch = ScratchDirectory("render")
        let path = scratch.write("text.jpg", Array("not a photo".utf8))
        #expect(throws: JPEGImageError.self) { try PhotoSizeRenderer().render(.medium, ofFileAt: path, maxPixels: 0) }
    }
}
