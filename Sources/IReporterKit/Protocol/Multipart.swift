#if canImport(Glibc)
import Glibc
#endif
import CSystem

public enum FormDataError: Error, Equatable, Sendable {
    /// The body does not follow the multipart grammar (the reason says where).
    case malformed(String)
    /// A file part grew past the configured limit.
    case fileTooLarge(limit: Int)
    /// A text field, the headers of a part, or the number of parts is over its limit.
    case overLimit(String)
    /// The spool file could not be written (errno).
    case spoolFailed(Int32)
}

public struct MultipartLimits: Sendable {
    public var maxFileBytes: Int
    public var maxFieldBytes = 64 * 1024
    public var maxHeaderBytes = 8 * 1024
    public var maxParts = 32

    public init(maxFileBytes: Int) { self.maxFileBytes = maxFileBytes }
}

/// A streaming `multipart/form-data` parser: fed the body in chunks as it is
/// read, it keeps text fields in memory (bounded) and writes file parts
/// straight to spool files, so an upload never sits in memory whole.
///
/// Lines end in CRLF or a bare LF, and a part header may continue on lines
/// that start with a space or tab, as PHP's own parser reads them: a
/// PHP-era client that writes LF alone keeps working.
public final class MultipartParser {
    private enum State { case searchingFirstDelimiter, afterDelimiter, headers, body, epilogue }

    private struct Part {
        var name: [UInt8]
        var filename: [UInt8]?
        var contentType: [UInt8]
        var text: [UInt8] = []
        var spool: SpoolFile?
        var size = 0
    }

    private let delimiter: [UInt8]
    private let limits: MultipartLimits
    private let spoolDirectory: String
    private var state = State.searchingFirstDelimiter
    private var pending: [UInt8]
    private var start = 0
    private var part: Part?
    private var partCount = 0
    private var form = FormData()
    private var openSpools: [SpoolFile] = []

    /// The boundary from `Content-Type: multipart/form-data; boundary=…`, or nil.
    public static func boundary(fromContentType contentType: String) -> [UInt8]? {
        let parameters = HeaderParameters(Array(contentType.utf8))
        guard parameters.value.lowercased() == "multipart/form-data",
              let boundary = parameters["boundary"], (1...200).contains(boundary.count) else { return nil }
        return boundary
    }

    public init(boundary: [UInt8], limits: MultipartLimits, spoolDirectory: String) {
        // The CR before it, when sent, belongs to the line break, not to the part.
        delimiter = Array("\n--".utf8) + boundary
        self.limits = limits
        self.spoolDirectory = spoolDirectory
        // A body starts with the delimiter minus its leading line break: pretend one was sent.
        pending = Array("\n".utf8)
    }

    deinit { for spool in openSpools { spool.discard() } }

    public func feed(_ chunk: UnsafeRawBufferPointer) throws(FormDataError) {
        pending.append(contentsOf: chunk)
        try consumePending()
    }

    public func feed(_ bytes: [UInt8]) throws(FormDataError) {
        pending.append(contentsOf: bytes)
        try consumePending()
    }

    private func consumePending() throws(FormDataError) {
        try process()
        if start > 65536 || start == pending.count {
            pending.removeSubrange(0..<start)
            start = 0
        }
    }

    /// The parsed form. The caller owns the spool files from here on
    /// (`FormData.spooledPaths`).
    public func finish() throws(FormDataError) -> FormData {
        guard state == .epilogue else {
            throw .malformed(state == .searchingFirstDelimiter ? "no boundary found" : "body ends before the closing boundary")
        }
        openSpools.removeAll()
        return form
    }

    private var available: Int { pending.count - start }

    private func process() throws(FormDataError) {
        while true {
            switch state {
            case .searchingFirstDelimiter:
                guard let found = find(delimiter) else {
                    start = max(start, pending.count - delimiter.count + 1)
                    return
                }
                start = found + delimiter.count
                state = .afterDelimiter
            case .afterDelimiter:
                // "--" closes the body; otherwise optional padding, then a line break.
                guard available >= 2 else { return }
                if pending[start] == UInt8(ascii: "-") && pending[start + 1] == UInt8(ascii: "-") {
                    state = .epilogue
                    continue
                }
                var i = start
                while i < pending.count, pending[i] == 0x20 || pending[i] == 0x09 { i += 1 }
                // The same limit however the body was split into chunks.
                if i - start > 64 { throw .malformed("padding after a boundary") }
                guard i < pending.count else { return }
                if pending[i] == 0x0D {
                    guard i + 1 < pending.count else { return }
                    i += 1
                }
                guard pending[i] == 0x0A else { throw .malformed("no line break after a boundary") }
                start = i // keep the LF: the header block's end is searched from it
                state = .headers
            case .headers:
                guard let end = headerBlockEnd() else {
                    // Up to 2 bytes of the closing blank line may already be
                    // here: count as if the block were complete.
                    if available - 2 > limits.maxHeaderBytes { throw .overLimit("part headers") }
                    return
                }
                if end - start > limits.maxHeaderBytes { throw .overLimit("part headers") }
                try beginPart(headers: Array(pending[(start + 1)..<max(start + 1, end)]))
                start = end + (pending[end + 1] == 0x0D ? Self.blankLine.count : Self.bareBlankLine.count)
                state = .body
            case .body:
                if let found = find(delimiter) {
                    try appendToPart(start..<(found > start && pending[found - 1] == 0x0D ? found - 1 : found))
                    try endPart()
                    start = found + delimiter.count
                    state = .afterDelimiter
                } else {
                    // A delimiter may begin in the last bytes, with the CR before it.
                    let keep = delimiter.count
                    if available > keep {
                        try appendToPart(start..<(pending.count - keep))
                        start = pending.count - keep
                    }
                    return
                }
            case .epilogue:
                start = pending.count
                return
            }
        }
    }

    private static let blankLine = Array("\n\r\n".utf8)
    private static let bareBlankLine = Array("\n\n".utf8)

    /// Where the part's header block ends: the first LF followed by CRLF
    /// or LF (a blank line), looked for only as far as a block within the
    /// limit could reach. (Searched for each blank line's form over the
    /// rest of the chunk, it was a byte-by-byte scan of the photo after
    /// every part's headers: ~5 % of a 640x640 upload's CPU.)
    private func headerBlockEnd() -> Int? {
        let window = min(available, limits.maxHeaderBytes + Self.blankLine.count)
        return pending.withUnsafeBytes { bytes -> Int? in
            let base = bytes.baseAddress!
            var at = start
            while at < start + window - 1, let found = memchr(base + at, 0x0A, start + window - 1 - at) {
                let lf = base.distance(to: found)
                if bytes[lf + 1] == 0x0A { return lf }
                if bytes[lf + 1] == 0x0D {
                    guard lf + 2 < start + window else { return nil }
                    if bytes[lf + 2] == 0x0A { return lf }
                }
                at = lf + 1
            }
            return nil
        }
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard available >= needle.count else { return nil }
        let offset = pending.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { csystem_find(haystack.baseAddress! + start, available, $0.baseAddress!, needle.count) }
        }
        return offset < 0 ? nil : start + offset
    }

    private func beginPart(headers: [UInt8]) throws(FormDataError) {
        partCount += 1
        if partCount > limits.maxParts { throw .overLimit("number of parts") }
        // Each header with its continuation lines (those that start with a space or tab).
        var fields: [(name: String, value: [UInt8])] = []
        for line in headers.split(separator: 0x0A) {
            let line = line.last == 0x0D ? line.dropLast() : line
            if let first = line.first, first == 0x20 || first == 0x09, !fields.isEmpty {
                fields[fields.count - 1].value += line
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw .malformed("part header without a colon") }
            fields.append((String(decoding: line[..<colon], as: UTF8.self).lowercased(), Array(line[(colon + 1)...])))
        }
        var disposition: HeaderParameters?
        var contentType: [UInt8] = []
        for (name, value) in fields {
            if name == "content-disposition" { disposition = HeaderParameters(value) }
            if name == "content-type" { contentType = HeaderParameters.trimmed(value) }
        }
        guard let disposition, disposition.value.lowercased() == "form-data",
              let name = disposition["name"] else {
            throw .malformed("part without Content-Disposition: form-data; name=…")
        }
        var part = Part(name: name, filename: disposition["filename"], contentType: contentType)
        if let filename = part.filename, !filename.isEmpty {
            do {
                let spool = try SpoolFile(directory: spoolDirectory)
                openSpools.append(spool)
                part.spool = spool
            } catch {
                throw .spoolFailed(error.code)
            }
        }
        self.part = part
    }

    private func appendToPart(_ range: Range<Int>) throws(FormDataError) {
        guard !range.isEmpty, part != nil else { return }
        part!.size += range.count
        if let spool = part!.spool {
            if part!.size > limits.maxFileBytes { throw .fileTooLarge(limit: limits.maxFileBytes) }
            let result = pending.withUnsafeBytes { spool.write(UnsafeRawBufferPointer(rebasing: $0[range])) }
            if let errno = result { throw .spoolFailed(errno) }
        } else if part!.filename != nil {
            // An empty filename: PHP ignores the content (UPLOAD_ERR_NO_FILE).
        } else {
            if part!.size > limits.maxFieldBytes { throw .overLimit("a text field") }
            part!.text.append(contentsOf: pending[range])
        }
    }

    private func endPart() throws(FormDataError) {
        guard let part else { return }
        self.part = nil
        if let filename = part.filename {
            if let spool = part.spool, let errno = spool.close() { throw .spoolFailed(errno) }
            form.addFile(part.name, UploadedFile(filename: filename, contentType: part.contentType,
                                                 spoolPath: part.spool?.path, size: part.size))
        } else {
            form.setField(part.name, part.text)
        }
    }
}
