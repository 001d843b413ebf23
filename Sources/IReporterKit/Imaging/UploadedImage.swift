import CGD

/// What a photo sent to the Mastodon API's media endpoint is, by its first
/// bytes (a client's Content-Type is not trusted), and the JPEG that
/// `upload` takes made of a PNG or HEIC one with libgd. The size is read
/// from the file's header and checked against `max_image_pixels` before
/// anything is decoded, as the JPEG decoder checks it.
public enum UploadedImage {
    public enum Format: Equatable, Sendable { case jpeg, png, heic, other }

    enum Failure: Error, Equatable {
        /// Not an image we take, or one gd cannot read.
        case unreadable(Format)
        case tooManyPixels
        /// Debian's libgd may be built without HEIF.
        case heicUnsupported
    }

    public static func format(of bytes: [UInt8]) -> Format {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        // ISO BMFF: `ftyp` with an HEIF brand (an iPhone's photo: `heic`).
        if bytes.count >= 12, bytes[4..<8].elementsEqual("ftyp".utf8),
           ["heic", "heix", "heim", "heis", "mif1", "msf1"].contains(String(decoding: bytes[8..<12], as: UTF8.self)) {
            return .heic
        }
        return .other
    }

    /// Whether this host's libgd reads HEIC (built with libheif): the
    /// instance's supported types say so too.
    static var decodesHEIC: Bool { gdSupportsFileType("photo.heic", 0) != 0 }

    /// The JPEG of a PNG or HEIC image (transparency over white).
    static func jpeg(of bytes: [UInt8], format: Format, maxPixels: Int) throws(Failure) -> [UInt8] {
        let size: (width: Int, height: Int)?
        switch format {
        case .png: size = pngSize(bytes)
        case .heic:
            guard decodesHEIC else { throw .heicUnsupported }
            size = heifSize(bytes)
        case .jpeg, .other: throw .unreadable(format)
        }
        guard let size else { throw .unreadable(format) }
        guard pixels(size) <= maxPixels else { throw .tooManyPixels }
        // gd takes the length as an int (max_upload_bytes allows 2 GiB).
        guard bytes.count <= Int32.max else { throw .unreadable(format) }
        let decoded = bytes.withUnsafeBytes { buffer -> gdImagePtr? in
            let data = UnsafeMutableRawPointer(mutating: buffer.baseAddress)
            return format == .png ? gdImageCreateFromPngPtr(Int32(buffer.count), data) : gdImageCreateFromHeifPtr(Int32(buffer.count), data)
        }
        guard let decoded else { throw .unreadable(format) }
        let image = GDImage(owning: decoded)
        // HEIF's `ispe` is the coded size: the image shown may be cropped and turned within it.
        guard image.width * image.height <= pixels(size),
              let canvas = GDImage(trueColorWidth: image.width, height: image.height) else { throw .unreadable(format) }
        gdImageFilledRectangle(canvas.pointer, 0, 0, Int32(image.width - 1), Int32(image.height - 1), 0xFFFFFF)
        gdImageAlphaBlending(canvas.pointer, 1)
        gdImageCopy(canvas.pointer, image.pointer, 0, 0, 0, 0, Int32(image.width), Int32(image.height))
        guard let jpeg = canvas.jpegBytes(quality: 92) else { throw .unreadable(format) }
        return jpeg
    }

    /// Width times height, Int.max when that overflows: a header's sides
    /// are the sender's (up to 2^32 - 1 each).
    public static func pixels(_ size: (width: Int, height: Int)) -> Int {
        let (product, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        return overflow ? .max : product
    }

    /// IHDR's width and height.
    public static func pngSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count >= 24, bytes[12..<16].elementsEqual("IHDR".utf8) else { return nil }
        let width = bigEndian(bytes[16..<20]), height = bigEndian(bytes[20..<24])
        return width > 0 && height > 0 ? (width, height) : nil
    }

    /// The largest image the `meta` box describes (its `ispe` properties:
    /// every image item has one, the whole grid's included): the coded
    /// size, at least the size shown (a `clap` crops it, an `irot` turns it).
    public static func heifSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard let meta = topLevelBox("meta", in: bytes) else { return nil }
        var largest: (width: Int, height: Int)?
        var index = meta.lowerBound
        let marker = Array("ispe".utf8)
        while index + 16 <= meta.upperBound {
            if bytes[index..<index + 4].elementsEqual(marker) {
                let width = bigEndian(bytes[index + 8..<index + 12]), height = bigEndian(bytes[index + 12..<index + 16])
                if pixels((width, height)) > largest.map(pixels) ?? 0 { largest = (width, height) }
                index += 16
            } else {
                index += 1
            }
        }
        return largest
    }

    /// The range of a top-level box's contents.
    private static func topLevelBox(_ type: String, in bytes: [UInt8]) -> Range<Int>? {
        var offset = 0
        while offset + 8 <= bytes.count {
            var size = bigEndian(bytes[offset..<offset + 4])
            var header = 8
            if size == 1 {
                guard offset + 16 <= bytes.count else { return nil }
                size = bigEndian(bytes[offset + 8..<offset + 16])
                header = 16
            } else if size == 0 {
                size = bytes.count - offset
            }
            guard size >= header, offset + size <= bytes.count else { return nil }
            if bytes[offset + 4..<offset + 8].elementsEqual(type.utf8) { return offset + header..<offset + size }
            offset += size
        }
        return nil
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reduce(0) { $0 > Int.max >> 9 ? Int.max >> 1 : $0 << 8 | Int($1) }
    }
}
