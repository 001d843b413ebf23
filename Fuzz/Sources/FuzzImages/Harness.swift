#if canImport(Glibc)
import Glibc
#endif
import FuzzSupport
import IReporterKit

// A photo's bytes as the server meets them before it trusts them: the
// Mastodon media endpoint's header reads (PNG's IHDR, HEIF's `ispe`), the
// thumbnail's decode (libjpeg through CJpegScale: its source manager, its
// EXIF orientation reader, the pixel and memory limits) and the metadata
// stripper. Properties: sizes read from headers are positive and their
// pixel counts never trap; a thumbnail made is a JPEG; what the stripper
// writes keeps no APP1 (EXIF, XMP) or comment segment and is clean (stripped
// again, nothing changes); a failed strip leaves no copy behind.

let thumbnailer = Thumbnailer(maxDecodeBytes: 8 << 20)

/// The markers of the segments before the first scan (SOS), nil when the
/// bytes are not laid out as segments that far.
func markersBeforeScan(_ jpeg: [UInt8]) -> [UInt8]? {
    guard jpeg.starts(with: [0xFF, 0xD8]) else { return nil }
    var markers: [UInt8] = []
    var index = 2
    while index + 4 <= jpeg.count, jpeg[index] == 0xFF {
        let marker = jpeg[index + 1]
        markers.append(marker)
        if marker == 0xDA { return markers }
        // RSTn and TEM stand alone; every other segment has a length.
        index += (0xD0...0xD7).contains(marker) || marker == 0x01 ? 2 : 2 + (Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3]))
    }
    return nil
}

func readAll(_ path: String) -> [UInt8] {
    guard let file = fopen(path, "rb") else { return [] }
    defer { fclose(file) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { return out }
        out += chunk[..<count]
    }
}

/// Strips `path`; the copy (if one was asked for) is named by `copyName`.
/// Checks that a failure leaves no copy.
func strip(_ path: String, orientation: Int, copyName: String) -> String?? {
    var asked = false
    do {
        return .some(try JPEGMetadataStripper.strip(from: path, orientation: orientation) {
            asked = true
            return copyName
        })
    } catch {
        check(!asked || access(copyName, F_OK) != 0, "a failed strip (\(error)) left its copy \(copyName)")
        return .none
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = bytes(data, size)

    _ = UploadedImage.format(of: input)
    if let size = UploadedImage.pngSize(input) {
        check(size.width > 0 && size.height > 0 && UploadedImage.pixels(size) > 0, "PNG size \(size) of \(show(input))")
    }
    if let size = UploadedImage.heifSize(input) {
        check(UploadedImage.pixels(size) >= 0, "HEIF size \(size) of \(show(input))")
    }

    let photo = "\(scratchDirectory)/photo.jpg", copy = "\(scratchDirectory)/stripped.jpg",
        again = "\(scratchDirectory)/stripped-again.jpg"
    defer { for path in [photo, copy, again] { unlink(path) } }
    let fd = open(photo, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    check(fd >= 0, "cannot write \(photo)")
    let written = input.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    check(written == input.count, "short write to \(photo)")

    if let thumbnail = try? thumbnailer.thumbnail(ofFileAt: photo, maxPixels: 1 << 22) {
        check(thumbnail.jpeg.starts(with: [0xFF, 0xD8]), "the thumbnail of \(show(input)) is no JPEG")
        check(thumbnail.source.width > 0 && thumbnail.source.height > 0 && (1...8).contains(thumbnail.source.orientation),
              "decoded \(show(input)) with header \(thumbnail.source)")
    }

    _ = strip(photo, orientation: 6, copyName: copy)
    unlink(copy)
    guard case .some(let stripped) = strip(photo, orientation: 1, copyName: copy) else { return 0 }
    let clean = stripped.map(readAll) ?? input
    if let markers = markersBeforeScan(clean) {
        let kept = stripped == nil ? "kept as it was" : "stripped"
        check(!markers.contains(0xE1) && !markers.contains(0xFE), "\(show(input)) \(kept) still has EXIF or a comment")
    }
    if let stripped {
        guard case .some(let changed) = strip(stripped, orientation: 1, copyName: again) else {
            check(false, "the stripped copy of \(show(input)) cannot be stripped: \(show(clean))")
            return 0
        }
        check(changed == nil, "stripping \(show(input)) twice changed it: \(show(clean)) then \(show(readAll(again)))")
    }
    return 0
}
