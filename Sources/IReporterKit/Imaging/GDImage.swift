import CGD
import CJpegScale

/// Owns one gd image and destroys it in `deinit`: whoever holds the object
/// holds the pixels, and they cannot leak on an early return or a throw.
///
/// Not `Sendable`: a gd image is plain mutable memory. Create, use and drop
/// it on one thread (the thumbnailer does all of it inside one call).
final class GDImage {
    let pointer: gdImagePtr

    /// Takes ownership of `pointer`.
    init(owning pointer: gdImagePtr) {
        self.pointer = pointer
    }

    /// A new truecolor image (opaque black), or nil when gd cannot allocate it.
    convenience init?(trueColorWidth width: Int, height: Int) {
        guard width > 0, height > 0, width <= Int(Int32.max), height <= Int(Int32.max),
              let p = gdImageCreateTrueColor(Int32(width), Int32(height)) else { return nil }
        self.init(owning: p)
    }

    deinit {
        gdImageDestroy(pointer)
    }

    var width: Int { Int(ir_gd_sx(pointer)) }
    var height: Int { Int(ir_gd_sy(pointer)) }

    /// The centre square of the image, resampled to `side` x `side` with a
    /// triangle filter whose support widens with the reduction, so fine
    /// detail is averaged, not aliased as by the point-sampling CopyResized
    /// (`ir_resample_triangle`: gd's GD_TRIANGLE in fixed point, ~4.5x faster
    /// than `gdImageScale`, bench/profile-changes.md).
    func centreSquare(side: Int) -> GDImage? {
        let crop = min(width, height)
        return resampled(x: (width - crop) / 2, y: (height - crop) / 2, width: crop, height: crop, to: side, side)
    }

    /// The whole image resampled to `width` x `height` (the same filter):
    /// `self` when it has that size already.
    func scaled(width: Int, height: Int) -> GDImage? {
        if width == self.width && height == self.height { return self }
        return resampled(x: 0, y: 0, width: self.width, height: self.height, to: width, height)
    }

    private func resampled(x: Int, y: Int, width: Int, height: Int, to newWidth: Int, _ newHeight: Int) -> GDImage? {
        guard newWidth > 0, newHeight > 0, newWidth <= Int(Int32.max), newHeight <= Int(Int32.max),
              let p = ir_resample_triangle(pointer, Int32(x), Int32(y), Int32(width), Int32(height),
                                           Int32(newWidth), Int32(newHeight)) else { return nil }
        return GDImage(owning: p)
    }

    /// The image as it should be displayed given an EXIF Orientation (1...8):
    /// `self` when nothing has to change or after an in-place flip, a new
    /// image for the quarter turns. nil only when gd cannot allocate.
    func applyingEXIFOrientation(_ orientation: Int) -> GDImage? {
        switch orientation {
        case 2: gdImageFlipHorizontal(pointer); return self
        case 3: gdImageFlipBoth(pointer); return self
        case 4: gdImageFlipVertical(pointer); return self
        case 5:  // transpose: quarter turn clockwise, then mirror
            guard let r = rotatedClockwise(quarterTurns: 1) else { return nil }
            gdImageFlipHorizontal(r.pointer)
            return r
        case 6: return rotatedClockwise(quarterTurns: 1)
        case 7:  // transverse: quarter turn anticlockwise, then mirror
            guard let r = rotatedClockwise(quarterTurns: 3) else { return nil }
            gdImageFlipHorizontal(r.pointer)
            return r
        case 8: return rotatedClockwise(quarterTurns: 3)
        default: return self
        }
    }

    /// gd's exact 90/180/270 degree paths (gdImageRotateInterpolated
    /// special-cases multiples of 90; its angles are anticlockwise).
    private func rotatedClockwise(quarterTurns: Int) -> GDImage? {
        let anticlockwiseDegrees = Float((4 - quarterTurns % 4) % 4 * 90)
        guard let p = gdImageRotateInterpolated(pointer, anticlockwiseDegrees, 0) else { return nil }
        return GDImage(owning: p)
    }

    /// JPEG bytes (gdImageJpegPtr, baseline, 4:2:0), or nil when gd fails.
    func jpegBytes(quality: Int) -> [UInt8]? {
        var size: Int32 = 0
        guard let data = gdImageJpegPtr(pointer, &size, Int32(quality)) else { return nil }
        defer { gdFree(data) }
        guard size > 0 else { return nil }
        return [UInt8](UnsafeRawBufferPointer(start: data, count: Int(size)))
    }
}
