import CJpegScale

/// Why a file was not accepted as a JPEG photo, or could not be thumbnailed.
///
/// `notAJPEG`, `truncatedOrCorrupt`, `tooManyPixels`, `needsTooMuchMemory`
/// and `unsupported` are the upload's fault (`isInvalidImage`); `unreadable`, `outOfMemory` and
/// `encodingFailed` are the server's.
public enum JPEGImageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file could not be opened or is not a regular file (message from the system).
    case unreadable(String)
    /// Empty, or does not start with a JPEG SOI marker (message from libjpeg).
    case notAJPEG(String)
    /// libjpeg reported an error or a warning: truncated file, bad Huffman
    /// code, premature end of data segment, ... (libjpeg's message).
    case truncatedOrCorrupt(String)
    /// The header declares more than `limit` pixels (width x height, as stored);
    /// refused before any pixel memory is allocated.
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// A progressive (or multi-scan) file, which libjpeg must hold whole,
    /// would take `bytes` of coefficients, more than `limit`; refused before
    /// decoding.
    case needsTooMuchMemory(width: Int, height: Int, bytes: Int, limit: Int)
    /// A valid JPEG this decoder does not handle: 12-bit samples, an unknown
    /// colour space, more than 256 progressive scans, a side over 65500, ...
    case unsupported(String)
    /// An allocation failed (libjpeg's or gd's).
    case outOfMemory(String)
    /// gd failed to crop, rotate or encode the thumbnail.
    case encodingFailed(String)

    public var description: String {
        switch self {
        case .unreadable(let m): return "cannot read the image file: \(m)"
        case .notAJPEG(let m): return "not a JPEG file: \(m)"
        case .truncatedOrCorrupt(let m): return "truncated or corrupt JPEG: \(m)"
        case .tooManyPixels(let w, let h, let limit):
            return "JPEG is \(w)x\(h) = \(w * h) pixels, more than the limit of \(limit)"
        case .needsTooMuchMemory(let w, let h, let bytes, let limit):
            return "progressive JPEG of \(w)x\(h) needs \(bytes) bytes to decode, more than the limit of \(limit)"
        case .unsupported(let m): return "unsupported JPEG: \(m)"
        case .outOfMemory(let m): return "out of memory decoding the JPEG: \(m)"
        case .encodingFailed(let m): return "cannot make the thumbnail: \(m)"
        }
    }

    /// True when the file itself is at fault (reject the upload); false for
    /// server-side trouble (I/O, memory, gd).
    public var isInvalidImage: Bool {
        switch self {
        case .notAJPEG, .truncatedOrCorrupt, .tooManyPixels, .needsTooMuchMemory, .unsupported: return true
        case .unreadable, .outOfMemory, .encodingFailed: return false
        }
    }

    /// Maps a CJpegScale status; nil for IR_JPEG_OK.
    init?(status: ir_jpeg_status, message: String, info: ir_jpeg_info, limit: Int, memoryLimit: Int = 0) {
        switch status {
        case IR_JPEG_OK: return nil
        case IR_JPEG_ERR_IO: self = .unreadable(message)
        case IR_JPEG_ERR_NOT_JPEG: self = .notAJPEG(message)
        case IR_JPEG_ERR_TOO_MANY_PIXELS:
            self = .tooManyPixels(width: Int(info.width), height: Int(info.height), limit: limit)
        case IR_JPEG_ERR_TOO_MUCH_MEMORY:
            self = .needsTooMuchMemory(width: Int(info.width), height: Int(info.height),
                                       bytes: Int(info.coefficient_bytes), limit: memoryLimit)
        case IR_JPEG_ERR_UNSUPPORTED: self = .unsupported(message)
        case IR_JPEG_ERR_NO_MEMORY: self = .outOfMemory(message)
        default: self = .truncatedOrCorrupt(message)
        }
    }
}
