#if canImport(Glibc)
import Glibc
#endif

/// Rewrites a JPEG without the metadata that can identify a person (EXIF
/// with GPS position and camera serial, XMP, IPTC, comments, maker data and
/// appended trailers), losslessly: the compressed image data is copied byte
/// for byte, nothing is decoded. It keeps what display needs: JFIF (APP0),
/// the colour profile (APP2 ICC_PROFILE), Adobe's colour transform (APP14),
/// and the orientation, written back as a minimal EXIF block of one tag.
///
/// A file with nothing to strip is only read: its copy would be the same
/// bytes, so no copy is made (most uploads of an app that sends no EXIF).
/// Streams through a fixed buffer, so memory does not grow with the photo.
public enum JPEGMetadataStripper {
    public enum Failure: Error, Equatable {
        case notAJPEG
        case malformed(String)
        case io(String)
    }

    /// Copies `source` without metadata to the file `destination` names,
    /// which is asked for (and created) only when there is something to
    /// strip. Returns that file, or nil when `source` is clean as it is.
    public static func strip(from source: String, orientation: Int,
                             into destination: () throws -> String) throws(Failure) -> String? {
        guard let input = fopen(source, "rb") else { throw .io("open \(source): \(String(cString: strerror(errno)))") }
        defer { fclose(input) }
        // The writer holds on to `destination` only for the length of this call.
        return try withoutActuallyEscaping(destination) { destination in
            Result { () throws(Failure) -> String? in try strip(input, orientation: orientation, into: destination) }
        }.get()
    }

    private static func strip(_ input: UnsafeMutablePointer<FILE>, orientation: Int,
                              into destination: @escaping () throws -> String) throws(Failure) -> String? {
        var reader = Reader(file: input)
        var writer = Writer(source: input, destination: destination)
        do throws(Failure) {
            try copy(&reader, &writer, orientation: orientation)
            // Nothing dropped, nothing added: the copy would end where the
            // file does unless something (a trailer) follows the image.
            if !writer.diverged, try writer.written != size(of: input) { try writer.diverge() }
            try writer.finish()
        } catch {
            writer.discard()
            throw error
        }
        return writer.path
    }

    private static func size(of file: UnsafeMutablePointer<FILE>) throws(Failure) -> Int {
        var status = stat()
        guard fstat(fileno(file), &status) == 0 else { throw .io("stat: \(String(cString: strerror(errno)))") }
        return Int(status.st_size)
    }

    private static func copy(_ reader: inout Reader, _ writer: inout Writer, orientation: Int) throws(Failure) {
        guard try reader.byte() == 0xFF, try reader.byte() == 0xD8 else { throw .notAJPEG }
        try writer.write([0xFF, 0xD8])
        var wroteOrientation = false
        var inScan = false
        while true {
            // Inside entropy-coded data, FF 00 is a data byte and FF D0-D7
            // a restart marker; any other FF xx starts a marker.
            var marker: UInt8
            if inScan {
                guard let next = try reader.scanToMarker(copyingTo: &writer) else { throw .malformed("no end of image") }
                marker = next
            } else {
                guard try reader.byte() == 0xFF else { throw .malformed("marker expected") }
                marker = try reader.byte()
                if marker == 0xFF { try writer.diverge() } // fill bytes, dropped
                while marker == 0xFF { marker = try reader.byte() }
            }
            switch marker {
            case 0xD9: // EOI: done; anything after it (trailers, appended images) is dropped
                try writer.write([0xFF, 0xD9])
                return
            case 0xD0...0xD7, 0x01:
                try writer.write([0xFF, marker])
                continue
            default:
                break
            }
            let length = Int(try reader.byte()) << 8 | Int(try reader.byte())
            guard length >= 2 else { throw .malformed("segment length \(length)") }
            let isAPP = (0xE0...0xEF).contains(marker)
            if isAPP || marker == 0xFE {
                let payload = try reader.bytes(length - 2)
                if keeps(marker: marker, payload: payload) {
                    try writer.write([0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload)
                } else {
                    try writer.diverge()
                }
                continue
            }
            // The first non-APP segment: the place for the orientation tag
            // (after JFIF / before the tables, where readers look for EXIF).
            if !wroteOrientation {
                wroteOrientation = true
                if (2...8).contains(orientation) {
                    try writer.diverge()
                    try writer.write(orientationSegment(orientation))
                }
            }
            try writer.write([0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)])
            try reader.copy(length - 2, to: &writer)
            if marker == 0xDA { inScan = true }
        }
    }

    private static func keeps(marker: UInt8, payload: [UInt8]) -> Bool {
        switch marker {
        case 0xE0: return payload.starts(with: Array("JFIF\0".utf8))
        case 0xE2: return payload.starts(with: Array("ICC_PROFILE\0".utf8))
        case 0xEE: return payload.starts(with: Array("Adobe".utf8))
        default: return false
        }
    }

    /// APP1 "Exif" with a big-endian TIFF header and IFD0 holding only
    /// Orientation (0x0112, SHORT, 1 value).
    static func orientationSegment(_ orientation: Int) -> [UInt8] {
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08, // MM, 42, IFD0 at 8
                             0x00, 0x01,                                     // one entry
                             0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, // Orientation, SHORT, count 1
                             0x00, UInt8(orientation), 0x00, 0x00,           // value
                             0x00, 0x00, 0x00, 0x00]                         // no next IFD
        let payload = Array("Exif\0\0".utf8) + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    private struct Reader {
        let file: UnsafeMutablePointer<FILE>
        var buffer = [UInt8](repeating: 0, count: 65536)
        var position = 0
        var filled = 0

        init(file: UnsafeMutablePointer<FILE>) { self.file = file }

        mutating func refill() -> Bool {
            filled = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            position = 0
            return filled > 0
        }

        mutating func byte() throws(Failure) -> UInt8 {
            if position == filled && !refill() { throw .malformed("file ends early") }
            defer { position += 1 }
            return buffer[position]
        }

        mutating func bytes(_ count: Int) throws(Failure) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(count)
            while out.count < count {
                if position == filled && !refill() { throw .malformed("file ends early") }
                let take = min(count - out.count, filled - position)
                out += buffer[position..<(position + take)]
                position += take
            }
            return out
        }

        mutating func copy(_ count: Int, to writer: inout Writer) throws(Failure) {
            var remaining = count
            while remaining > 0 {
                if position == filled && !refill() { throw .malformed("file ends early") }
                let take = min(remaining, filled - position)
                try writer.write(buffer[position..<(position + take)])
                position += take
                remaining -= take
            }
        }

        /// Copies scan data up to the next real marker, which it consumes and returns.
        mutating func scanToMarker(copyingTo writer: inout Writer) throws(Failure) -> UInt8? {
            while true {
                if position == filled && !refill() { return nil }
                let start = position
                // memchr: scan data is most of a photo, and this is its only pass.
                position = buffer.withUnsafeBytes { raw in
                    guard let hit = memchr(raw.baseAddress! + start, 0xFF, filled - start) else { return filled }
                    return UnsafeRawPointer(hit) - raw.baseAddress!
                }
                try writer.write(buffer[start..<position])
                if position == filled { continue }
                position += 1 // the FF
                var fill = 0 // extra FFs, kept as they were
                var next = try byte()
                while next == 0xFF { fill += 1; next = try byte() }
                if next == 0x00 || (0xD0...0xD7).contains(next) {
                    try writer.write([UInt8](repeating: 0xFF, count: fill + 1) + [next])
                    continue
                }
                if fill > 0 { try writer.diverge() } // fill bytes before a marker, dropped
                return next
            }
        }
    }

    /// Writes the copy, lazily: while everything written is the source's
    /// own prefix it only counts; at the first difference (`diverge`) it
    /// creates the destination and copies that prefix into it.
    private struct Writer {
        let source: UnsafeMutablePointer<FILE>
        let destination: () throws -> String
        private var file: UnsafeMutablePointer<FILE>?
        private(set) var path: String?
        private(set) var written = 0

        init(source: UnsafeMutablePointer<FILE>, destination: @escaping () throws -> String) {
            self.source = source
            self.destination = destination
        }

        var diverged: Bool { file != nil }

        mutating func write<C: Collection>(_ bytes: C) throws(Failure) where C.Element == UInt8 {
            guard !bytes.isEmpty else { return }
            if let file {
                let count = bytes.withContiguousStorageIfAvailable { fwrite($0.baseAddress, 1, $0.count, file) }
                    ?? Array(bytes).withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
                guard count == bytes.count else { throw .io("write: \(String(cString: strerror(errno)))") }
            }
            written += bytes.count
        }

        /// The copy differs from the source from here on.
        mutating func diverge() throws(Failure) {
            guard file == nil else { return }
            let path: String
            do { path = try destination() } catch { throw .io("create the copy: \(error)") }
            guard let output = fopen(path, "wb") else { throw .io("create \(path): \(String(cString: strerror(errno)))") }
            file = output
            self.path = path
            var prefix = [UInt8](repeating: 0, count: min(written, 65536))
            var offset = 0
            while offset < written {
                let count = prefix.withUnsafeMutableBytes { pread(fileno(source), $0.baseAddress, min($0.count, written - offset), off_t(offset)) }
                guard count > 0 else { throw .io("read: \(count < 0 ? String(cString: strerror(errno)) : "file ends early")") }
                guard fwrite(prefix, 1, count, output) == count else { throw .io("write: \(String(cString: strerror(errno)))") }
                offset += count
            }
        }

        mutating func finish() throws(Failure) {
            guard let file else { return }
            self.file = nil
            guard fclose(file) == 0 else { throw .io("close \(path ?? ""): \(String(cString: strerror(errno)))") }
        }

        /// After a failure: no partial copy is left.
        mutating func discard() {
            if let file { fclose(file) }
            file = nil
            if let path { unlink(path) }
            path = nil
        }
    }
}
