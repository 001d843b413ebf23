import CGD

/// A photo with an effect rendered into it, and its thumbnail made from the
/// same pixels.
public struct RenderedPhoto: Sendable {
    public let photo: [UInt8]
    public let thumbnail: [UInt8]
    /// As displayed (upright).
    public let width: Int
    public let height: Int
}

/// Renders an effect into an uploaded JPEG: decoded once at full size,
/// turned upright (the EXIF orientation applied), the effect, then encoded
/// once as the stored photo and once, scaled, as its thumbnail. The result
/// carries no metadata at all (a new encoding). `preview` does the same at
/// a small size, so a client shows what `upload` will store.
///
/// Memory: 4 bytes a pixel while it runs (48 MB for 12 MP), bounded by
/// `maxPixels` before anything is decoded.
public struct EffectRenderer: Sendable {
    public let thumbnailer: Thumbnailer
    /// gd JPEG quality of the stored photo.
    public let quality: Int
    /// The short side a preview is decoded to (at least; DCT scaling).
    public let previewSide: Int

    public init(thumbnailer: Thumbnailer = Thumbnailer(), quality: Int = 90, previewSide: Int = 480) {
        self.thumbnailer = thumbnailer
        self.quality = quality
        self.previewSide = previewSide
    }

    /// Throws only `JPEGImageError`.
    public func render(fileAt path: String, effect: PhotoEffect, maxPixels: Int) throws -> RenderedPhoto {
        let image = try upright(fileAt: path, shortSide: Int(Int32.max), effect: effect, maxPixels: maxPixels)
        guard let photo = image.jpegBytes(quality: quality) else { throw JPEGImageError.encodingFailed("gdImageJpegPtr failed") }
        guard let square = image.centreSquare(side: thumbnailer.side) else {
            throw JPEGImageError.outOfMemory("cannot allocate the \(thumbnailer.side)x\(thumbnailer.side) thumbnail")
        }
        guard let thumbnail = square.jpegBytes(quality: thumbnailer.quality) else {
            throw JPEGImageError.encodingFailed("gdImageJpegPtr failed")
        }
        return RenderedPhoto(photo: photo, thumbnail: thumbnail, width: image.width, height: image.height)
    }

    /// The effect on a copy of the photo whose short side is about
    /// `previewSide` (never scaled up). Throws only `JPEGImageError`.
    public func preview(fileAt path: String, effect: PhotoEffect, maxPixels: Int) throws -> [UInt8] {
        let image = try upright(fileAt: path, shortSide: previewSide, effect: effect, maxPixels: maxPixels)
        guard let jpeg = image.jpegBytes(quality: thumbnailer.quality) else {
            throw JPEGImageError.encodingFailed("gdImageJpegPtr failed")
        }
        return jpeg
    }

    private func upright(fileAt path: String, shortSide: Int, effect: PhotoEffect, maxPixels: Int) throws -> GDImage {
        let (decoded, header) = try thumbnailer.decode(fileAt: path, minShortSide: shortSide, maxPixels: maxPixels)
        guard let image = decoded.applyingEXIFOrientation(header.orientation) else {
            throw JPEGImageError.outOfMemory("cannot rotate the photo")
        }
        guard effect.apply(to: image) else { throw JPEGImageError.outOfMemory("gd could not apply \(effect.rawValue)") }
        return image
    }
}
