import CGD
import CJpegScale

/// What a JPEG's header says, before any pixel is decoded.
public struct JPEGHeader: Sendable, Hashable {
    /// Size as stored in the file (before the EXIF orientation is applied).
    public let width: Int
    public let height: Int
    /// 1 grayscale, 3 YCbCr/RGB, 4 CMYK/YCCK.
    public let components: Int
    /// EXIF Orientation, 1...8 (1 when the file has none or an invalid one).
    public let orientation: Int
    public let isProgressive: Bool

    public init(width: Int, height: Int, components: Int, orientation: Int, isProgressive: Bool) {
        self.width = width
        self.height = height
        self.components = components
        self.orientation = orientation
        self.isProgressive = isProgressive
    }

    /// Size as displayed: orientations 5...8 swap width and height.
    public var displayWidth: Int { orientation >= 5 ? height : width }
    public var displayHeight: Int { orientation >= 5 ? width : height }

    init(_ info: ir_jpeg_info) {
        self.init(width: Int(info.width), height: Int(info.height), components: Int(info.components),
                  orientation: (1...8).contains(Int(info.orientation)) ? Int(info.orientation) : 1,
                  isProgressive: info.progressive != 0)
    }
}

/// A thumbnail and the header of the photo it was made from.
public struct JPEGThumbnail: Sendable {
    /// The encoded side x side JPEG.
    public let jpeg: [UInt8]
    /// The source photo's header (stored size, orientation).
    public let source: JPEGHeader
}

/// Makes the square JPEG thumbnail of a JPEG photo, and in doing so checks
/// that the file is a JPEG that decodes completely and cleanly.
///
/// Pipeline: libjpeg-turbo decode with DCT scaling (the smallest M/8 that
/// keeps the short side >= `side`, 3/8 passed over for the faster 4/8; 1/8
/// for a 12 MP photo), centre crop to a
/// square, a triangle filter (`ir_resample_triangle`) to `side` x `side`, EXIF orientation
/// applied (so the thumbnail is upright), `gdImageJpegPtr` at `quality`.
///
/// A value type with no shared state: call it from any thread, concurrently.
/// Each call uses about 4 x (width/8) x (height/8) bytes for a large photo
/// (e.g. 0.8 MB for 12 MP) plus libjpeg's own buffers, and for a progressive
/// photo its whole coefficient buffer, at most `maxDecodeBytes`.
public struct Thumbnailer: Sendable {
    /// Side of the square thumbnail, pixels.
    public let side: Int
    /// gd JPEG quality, 0...100.
    public let quality: Int
    /// What a progressive (multi-scan) photo's coefficients may take; <= 0: no limit.
    public let maxDecodeBytes: Int
    /// Decodes through libjpeg's warnings (extraneous bytes, a truncated
    /// end), as PHP's GD does: for photos already stored (the PHP version
    /// stored any file); an upload is checked strictly.
    public let toleratesWarnings: Bool

    public init(side: Int = 180, quality: Int = 85, maxDecodeBytes: Int = Configuration().maxDecodeMemoryMiB << 20,
                toleratesWarnings: Bool = false) {
        precondition(side >= 1 && side <= 4096, "thumbnail side out of range: \(side)")
        precondition((0...100).contains(quality), "JPEG quality out of range: \(quality)")
        self.side = side
        self.quality = quality
        self.maxDecodeBytes = maxDecodeBytes
        self.toleratesWarnings = toleratesWarnings
    }

    /// The encoded `side` x `side` thumbnail of the JPEG at `path`.
    /// `maxPixels` bounds width x height as declared by the header (checked
    /// before decoding); <= 0 means no limit.
    /// Throws only `JPEGImageError`.
    public func thumbnailJPEG(ofFileAt path: String, maxPixels: Int) throws -> [UInt8] {
        try thumbnail(ofFileAt: path, maxPixels: maxPixels).jpeg
    }

    /// The same, with the source photo's header. Throws only `JPEGImageError`.
    public func thumbnail(ofFileAt path: String, maxPixels: Int) throws -> JPEGThumbnail {
        let (decoded, header) = try decode(fileAt: path, minShortSide: side, maxPixels: maxPixels)
        guard let square = decoded.centreSquare(side: side) else {
            throw JPEGImageError.outOfMemory("cannot allocate the \(side)x\(side) thumbnail")
        }
        guard let upright = square.applyingEXIFOrientation(header.orientation) else {
            throw JPEGImageError.outOfMemory("cannot rotate the thumbnail")
        }
        guard let jpeg = upright.jpegBytes(quality: quality) else {
            throw JPEGImageError.encodingFailed("gdImageJpegPtr failed")
        }
        return JPEGThumbnail(jpeg: jpeg, source: header)
    }

    /// The whole file decoded, DCT-scaled to the smallest M/8 (not 3/8) that keeps
    /// the short side >= `minShortSide` (full size when it is larger than
    /// the photo), with its header. Throws only `JPEGImageError`.
    func decode(fileAt path: String, minShortSide: Int, maxPixels: Int) throws -> (GDImage, JPEGHeader) {
        var info = ir_jpeg_info()
        var image: gdImagePtr? = nil
        var message = [CChar](repeating: 0, count: Int(IR_JPEG_MSG_LEN))
        let status = path.withCString { cPath in
            ir_jpeg_decode_scaled(cPath, Int32(clamping: minShortSide), Int64(maxPixels), Int64(maxDecodeBytes),
                                  toleratesWarnings ? 1 : 0, &image, &info, &message, message.count)
        }
        if let error = JPEGImageError(status: status, message: String(cBuffer: message),
                                      info: info, limit: maxPixels, memoryLimit: maxDecodeBytes) {
            throw error
        }
        guard let image else { throw JPEGImageError.outOfMemory("no image returned") }
        return (GDImage(owning: image), JPEGHeader(info))
    }

    /// Reads only the header (markers up to the first scan) and the EXIF
    /// orientation: cheap, but does not prove the image data is intact.
    /// Throws only `JPEGImageError`.
    public static func readHeader(ofFileAt path: String) throws -> JPEGHeader {
        var info = ir_jpeg_info()
        var message = [CChar](repeating: 0, count: Int(IR_JPEG_MSG_LEN))
        let status = path.withCString { cPath in
            ir_jpeg_read_header(cPath, &info, &message, message.count)
        }
        if let error = JPEGImageError(status: status, message: String(cBuffer: message), info: info, limit: 0) {
            throw error
        }
        return JPEGHeader(info)
    }
}
