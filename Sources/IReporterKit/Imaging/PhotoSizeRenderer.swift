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
        // A stored photo: checked when it came (or stored by the PHP version, which checked nothing).
        decoder = Thumbnailer(quality: quality, maxDecodeBytes: maxDecodeBytes, toleratesWarnings: true)
    }

    /// The encoded `size` (not `original`) of the JPEG at `path`, and its width and height.
    public func render(_ size: PhotoSize, ofFileAt path: String, maxPixels: Int) throws -> (jpeg: [UInt8], width: Int, height: Int) {
        let header = try Thumbnailer.readHeader(ofFileAt: path)
        let shown = size.dimensions(ofPhoto: header.displayWidth, header.displayHeight)
        // The same box before the quarter turn of orientations 5 to 8.
        let stored = header.orientation >= 5 ? (width: shown.height, height: shown.width) : shown
        let (decoded, _) = try decoder.decode(fileAt: path, minShortSide: min(stored.width, stored.height), maxPixels: maxPixels)
        let resized = size.isSquare ? decoded.centreSquare(side: stored.width) : decoded.scaled(width: stored.width, height: stored.height)
        guard let resized, let upright = resized.applyingEXIFOrientation(header.orientation) else {
            throw JPEGImageError.outOfMemory("cannot allocate the \(shown.width)x\(shown.height) rendition")
        }
        guard let jpeg = upright.jpegBytes(quality: quality) else {
            throw JPEGImageError.encodingFailed("gdImageJpegPtr failed")
        }
        return (jpeg, shown.width, shown.height)
    }
}
