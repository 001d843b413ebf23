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
/// Memory: gd's 4 bytes a pixel for each of up to three copies at once (the
/// decoded photo, its upright copy, the filter's own): `workingBytesPerPixel`.
/// Their total is kept within the thumbnailer's `maxDecodeBytes`
/// (`max_decode_memory_mib`): a photo whose copies would take more is
/// rendered at the largest DCT scale whose copies fit (a 12 MP photo at 7/8
/// with the default 128 MiB), so that `image_decode_concurrency` bounds
/// the memory of uploads with an effect as it does the others'.
public struct EffectRenderer: Sendable {
    /// What rendering takes per pixel of the decoded photo, at most.
    static let workingBytesPerPixel = 12

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
        let header = try Thumbnailer.readHeader(ofFileAt: path)
        let scale = Self.renderedScale(width: header.width, height: header.height, memoryLimit: thumbnailer.maxDecodeBytes)
        // The decoder takes the smallest scale whose short side reaches the one asked for: full size is asked as before.
        let shortSide = scale == 8 ? Int(Int32.max) : (min(header.width, header.height) * scale + 7) / 8
        let image = try upright(fileAt: path, shortSide: shortSide, effect: effect, maxPixels: maxPixels)
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

    /// The M of the scale M/8 to decode a `width` x `height` photo at: 8
    /// (full size), or the largest (3/8 passed over, as the decoder does)
    /// whose working copies fit in `memoryLimit` (<= 0: no limit); 1 at least.
    static func renderedScale(width: Int, height: Int, memoryLimit: Int) -> Int {
        [8, 7, 6, 5, 4, 2].first { m in
            memoryLimit <= 0 || ((width * m + 7) / 8) * ((height * m + 7) / 8) * workingBytesPerPixel <= memoryLimit
        } ?? 1
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
