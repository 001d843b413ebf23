#if canImport(Glibc)
import Glibc
#endif
import FuzzSupport
import IReporterKit

// Input: `<Content-Type header>\n<body>`. The boundary comes from the header
// through MultipartParser.boundary(fromContentType:), as in APIResponder.
// The body is parsed three times: in one feed, in chunks of pseudo-random
// sizes (seeded by the input, so a crash replays), and byte by byte (small
// bodies) or in 7-byte chunks. The three outcomes must be identical (fields,
// files with their spooled bytes, array names, or the same error); a failed
// parse must leave no spool file behind once the parser is gone; a
// successful one must spool exactly the files in `spooledPaths`.
//
// The limits are small so that the fuzzer reaches them with small inputs.
let limits: MultipartLimits = {
    var limits = MultipartLimits(maxFileBytes: 512)
    limits.maxFieldBytes = 256
    limits.maxHeaderBytes = 256
    limits.maxParts = 8
    return limits
}()

struct FileSnapshot: Equatable {
    var filename: [UInt8]
    var contentType: [UInt8]
    var size: Int
    var spooled: Bool
    var content: [UInt8]?
}

enum Outcome: Equatable {
    case parsed(fields: [String: [UInt8]], files: [String: FileSnapshot], arrayNames: Set<String>, spoolCount: Int)
    case failed(FormDataError)

    /// What the client gets (APIResponder.message(for:)): malformed and
    /// overLimit are the same "Malformed request", so which of the two a
    /// body trips first may depend on the chunking; the answer may not.
    var answer: Outcome {
        switch self {
        case .failed(.overLimit): .failed(.malformed("malformed request"))
        case .failed(.malformed): .failed(.malformed("malformed request"))
        default: self
        }
    }
}

enum Chunking { case whole, random, small }

func parse(_ body: [UInt8], boundary: [UInt8], chunking: Chunking) -> Outcome {
    let directory = scratchDirectory
    let outcome: Outcome
    do {
        let parser = MultipartParser(boundary: boundary, limits: limits, spoolDirectory: directory)
        do {
            switch chunking {
            case .whole:
                try parser.feed(body)
            case .random:
                var random = SplitMix64(seedingWith: body)
                var offset = 0
                while offset < body.count {
                    // Mostly small chunks, sometimes large ones (as FastCGI records arrive).
                    let size = random.next(below: 4) == 0 ? 1 + random.next(below: 700) : 1 + random.next(below: 40)
                    let end = min(offset + size, body.count)
                    let chunk = Array(body[offset..<end])
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk.count, alignment: 1)
                    defer { buffer.deallocate() }
                    buffer.copyBytes(from: chunk)
                    try parser.feed(UnsafeRawBufferPointer(buffer))
                    offset = end
                }
            case .small:
                let step = body.count <= 2048 ? 1 : 7
                var offset = 0
                while offset < body.count {
                    let end = min(offset + step, body.count)
                    try parser.feed(Array(body[offset..<end]))
                    offset = end
                }
            }
            let form = try parser.finish()
            outcome = snapshot(form, directory: directory)
        } catch {
            outcome = .failed(error)
        }
    } // the parser is gone here: its deinit must have removed its spool files
    let left = listDirectory(directory)
    check(left.isEmpty, "spool files left behind (\(chunking), \(outcome)): \(left)")
    for name in left { unlink("\(directory)/\(name)") }
    return outcome
}

func snapshot(_ form: FormData, directory: String) -> Outcome {
    let paths = form.spooledPaths
    check(Set(paths).count == paths.count, "a spool path is listed twice: \(paths)")
    let onDisk = Set(listDirectory(directory).map { "\(directory)/\($0)" })
    check(onDisk == Set(paths), "spool files on disk \(onDisk) are not the form's spooledPaths \(paths)")
    var files: [String: FileSnapshot] = [:]
    for (name, file) in form.files {
        check(!name.isEmpty, "a file with an empty name")
        var content: [UInt8]?
        if let path = file.spoolPath {
            check(!file.filename.isEmpty, "a spooled file without a filename")
            check(paths.contains(path), "file \(name)'s spool \(path) is not in spooledPaths")
            check(path.hasPrefix(directory + "/.spool-"), "spool file outside the spool directory: \(path)")
            content = readFile(path)
            check(content?.count == file.size, "file \(name): size \(file.size) but \(content?.count ?? -1) bytes spooled")
        } else {
            check(file.filename.isEmpty, "a named file (\(show(file.filename))) that was not spooled")
        }
        check(file.size <= limits.maxFileBytes || file.spoolPath == nil, "file over the limit accepted: \(file.size)")
        files[name] = FileSnapshot(filename: file.filename, contentType: file.contentType, size: file.size,
                                   spooled: file.spoolPath != nil, content: content)
    }
    for (name, value) in form.fields {
        check(!name.isEmpty, "a field with an empty name")
        check(value.count <= limits.maxFieldBytes, "field \(name) over the limit: \(value.count)")
        if !form.arrayNames.contains(name) { check(form.field(name) == value, "field(\(name)) disagrees with fields") }
    }
    // What APIResponder does when the request ends.
    for path in paths { unlink(path) }
    return .parsed(fields: form.fields, files: files, arrayNames: form.arrayNames, spoolCount: paths.count)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = bytes(data, size)
    let newline = input.firstIndex(of: 0x0A) ?? input.count
    // CONTENT_TYPE arrives as a C string.
    let header = String(decoding: input[..<newline].prefix { $0 != 0 }, as: UTF8.self)
    let body = newline < input.count ? Array(input[(newline + 1)...]) : []
    guard let boundary = MultipartParser.boundary(fromContentType: header) else { return 0 }
    check((1...200).contains(boundary.count), "boundary of \(boundary.count) bytes accepted")

    let whole = parse(body, boundary: boundary, chunking: .whole)
    for chunking in [Chunking.random, .small] {
        let chunked = parse(body, boundary: boundary, chunking: chunking)
        if whole.answer == chunked.answer { continue }
        check(false, "one feed and \(chunking) chunks disagree:\n  whole:   \(whole)\n  chunked: \(chunked)")
    }
    return 0
}
