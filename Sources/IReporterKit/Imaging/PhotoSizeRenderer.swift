/// Renders one of Flickr's sizes (`PhotoSize`) of a stored JPEG: the
/// thumbnailer's pipeline with the size's own box. The decode is DCT-scaled
/// to the smallest M/8 that still covers the size (1/8 of a 12 MP photo for
/// every size up to `w`), then resampled (gd's triangle filter), turned
/// upright (EXIF orientation) and encoded as baseline JPEG.
/// Throws only `JPEGImageError`.
public struct PhotoSizeRenderer: Sendable {
    /// gd JPEG quality, 0...100.
    public let quality: Int
    private let decoder: Thumbnailer

    public init(quality: Int = 85, maxDecodeBytes: Int = Configuration().maxDecodeMemoryMiB << 20) {
        self.quality = quality
        decoder = Thumbnailer(quality: quality, maxDecodeBytes: maxDecodeBytes)
    }

    /// The encoded `size` (not `original`) of the JPEG at `path`, and its width and height.
    public func render(_ size: PhotoSize, ofFileAt path: String, maxPixels: Int) throws -> (jpeg: [UInt8], width: Int, height: Int) {
        let header = try Thumbnailer.readHeader(ofFileAt: path)
        let box = boxes(size, of: header)
        let (decoded, _) = try decoder.decode(fileAt: path, minShortSide: min(box.stored.width, box.stored.height), maxPixels: maxPixels)
        return (try encode(size, box.stored, orientation: header.orientation, of: decoded), box.shown.width, box.shown.height)
    }

    /// At upload: `size` and the square thumbnail of `thumbnailer` made from
    /// one decode (at the larger of their scales), so that the sizes asked
    /// for later are made from `size` (a few milliseconds) rather than from
    /// the photo (a 12 MP photo's decode alone is tens of milliseconds).
    public func renderWithThumbnail(_ size: PhotoSize, thumbnailer: Thumbnailer, ofFileAt path: String,
                                    maxPixels: Int) throws -> (rendition: [UInt8], thumbnail: JPEGThumbnail) {
        let header = try Thumbnailer.readHeader(ofFileAt: path)
        let box = boxes(size, of: header)
        let (decoded, decodedHeader) = try decoder.decode(fileAt: path, minShortSide: max(thumbnailer.side, min(box.stored.width, box.stored.height)),
                                                          maxPixels: maxPixels)
        // The square first: the rendition may turn the decoded image itself.
        guard let square = decoded.centreSquare(side: thumbnailer.side),
              let uprightSquare = square.applyingEXIFOrientation(header.orientation) else {
            throw JPEGImageError.outOfMemory("cannot allocate the \(thumbnailer.side)x\(thumbnailer.side) thumbnail")
        }
        guard let thumbnail = uprightSquare.jpegBytes(quality: thumbnailer.quality) else {
            throw JPEGImageError.encodingFailed("gdImageJpegPtr failed")
        }
        return (try encode(size, box.stored, orientation: header.orientation, of: decoded),
                JPEGThumbnail(jpeg: thumbnail, source: decodedHeader))
    }

    /// The size's box as shown, and the same box before the quarter turn of orientations 5 to 8.
    private func boxes(_ size: PhotoSize, of header: JPEGHeader) -> (shown: (width: Int, height: Int), stored: (width: Int, height: Int)) {
        let shown = size.dimensions(ofPhoto: header.displayWidth, header.displayHeight)
        return (shown, header.orientation >= 5 ? (width: shown.height, height: shown.width) : shown)
    }

    private func encode(_ size: PhotoSize, _ stored: (width: Int, height: Int), orientation: Int, of decoded: GDImage) throws -> [UInt8] {
        let resized = size.isSquare ? decoded.centreSquare(side: stored.width) : decoded.scaled(width: stored.width, height: stored.height)
        guard let resized, let upright = resized.applyingEXIFOrientation(orientation) else {
            throw JPEGImageError.outOfMemory("cannot allocate the \(stored.width)x\(stored.height) rendition")
        }
        guard let jpeg = upright.jpegBytes(quality: quality) else {
            throw JPEGImageError.encodingFailed("gdImageJpegPtr failed")
        }
        return jpeg
    }
}
