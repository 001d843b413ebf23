import CGD

/// A real JPEG of the given size, made with gd.
public func makeJPEG(width: Int32, height: Int32, quality: Int32 = 85) -> [UInt8] {
    let image = gdImageCreateTrueColor(width, height)!
    defer { gdImageDestroy(image) }
    gdImageFilledRectangle(image, 0, 0, width / 2, height, 0xCC3322)
    gdImageFilledRectangle(image, width / 2, 0, width, height, 0x2255CC)
    var size: Int32 = 0
    let data = gdImageJpegPtr(image, &size, quality)!
    defer { gdFree(data) }
    return Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
}

/// The (width, height) a JPEG declares in its SOF marker.
public func jpegSize(_ bytes: [UInt8]) -> (Int, Int)? {
    var i = 2
    while i + 9 < bytes.count {
        guard bytes[i] == 0xFF else { i += 1; continue }
        let marker = bytes[i + 1]
        if (0xC0...0xC2).contains(marker) {
            return (Int(bytes[i + 7]) << 8 | Int(bytes[i + 8]), Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]))
        }
        i += 2 + (Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]))
    }
    return nil
}

/// A real PNG of the given size with gd: its left half transparent.
public func makePNG(width: Int32, height: Int32) -> [UInt8] {
    let image = gdImageCreateTrueColor(width, height)!
    defer { gdImageDestroy(image) }
    gdImageAlphaBlending(image, 0)
    gdImageSaveAlpha(image, 1)
    gdImageFilledRectangle(image, 0, 0, width / 2, height, 0x7F00_0000)
    gdImageFilledRectangle(image, width / 2, 0, width, height, 0x2255CC)
    var size: Int32 = 0
    let data = gdImagePngPtr(image, &size)!
    defer { gdFree(data) }
    return Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
}
