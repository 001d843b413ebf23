#if canImport(Glibc)
import Glibc
#endif
import FuzzSupport
import IReporterKit

// PHPSessionCodec: decode arbitrary session files (what a PHP site, a
// tampered file or a truncated write leaves); whatever decodes must encode
// to data that decodes to the same entries (names compared as bytes, not
// with String's canonical equivalence), and encode(decode(encode(x))) is
// stable. Also the other way round: entries built from the input (names
// without `|`, as our code writes them; any string bytes; any Int64; PHP
// arrays) must survive encode -> decode unchanged.

func same(_ a: [(String, PHPValue)], _ b: [(String, PHPValue)]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { Array($0.0.utf8) == Array($1.0.utf8) && $0.1 == $1.1 }
}

func describe(_ entries: [(String, PHPValue)]) -> String {
    entries.map { "\(show(Array($0.0.utf8)))=\($0.1)" }.joined(separator: ", ")
}

/// Entries built from the input bytes.
func build(_ input: [UInt8]) -> [(String, PHPValue)] {
    var entries: [(String, PHPValue)] = []
    var i = 0
    func take(_ n: Int) -> ArraySlice<UInt8> {
        let end = min(i + n, input.count)
        defer { i = end }
        return input[i..<end]
    }
    while i < input.count, entries.count < 16 {
        let tag = input[i]
        i += 1
        let nameLength = Int(tag >> 4)
        let name = String(decoding: take(nameLength).map { $0 == 0x7C ? 0x5F : $0 }, as: UTF8.self)
        let value: PHPValue
        switch tag % 7 {
        case 0: value = .string(Array(take(Int(take(1).first ?? 0))))
        case 1:
            var n: Int64 = 0
            for byte in take(8) { n = n << 8 | Int64(byte) }
            value = .int(n)
        case 2:
            var bits: UInt64 = 0
            for byte in take(8) { bits = bits << 8 | UInt64(byte) }
            value = .double("\(Double(bitPattern: bits))")
        case 3: value = .bool((take(1).first ?? 0) & 1 == 1)
        case 4: value = .null
        case 5:
            let bytes = Array(take(Int(take(1).first ?? 0) % 64))
            value = .serialized(Array("a:2:{i:0;s:\(bytes.count):\"".utf8) + bytes + Array("\";s:1:\"k\";a:0:{}}".utf8))
        default:
            let bytes = Array(take(Int(take(1).first ?? 0) % 32))
            value = .serialized(Array("O:8:\"stdClass\":1:{s:1:\"p\";s:\(bytes.count):\"".utf8) + bytes + Array("\";}".utf8))
        }
        entries.append((name, value))
    }
    return entries
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = bytes(data, size)

    if let entries = try? PHPSessionCodec.decode(input) {
        if dumpMode { print("session\t\(hex(input))\t\(entries.count)") }
        for (_, value) in entries { _ = value.intValue }
        let encoded = PHPSessionCodec.encode(entries)
        let again: [(String, PHPValue)]
        do { again = try PHPSessionCodec.decode(encoded) } catch {
            check(false, "encode(decode(\(show(input)))) = \(show(encoded)) does not decode: \(error)")
            return 0
        }
        check(same(entries, again), "round trip of \(show(input)): \(describe(entries)) became \(describe(again))")
        check(PHPSessionCodec.encode(again) == encoded, "encoding is not stable for \(show(input))")
        // Every name is what lies before a `|`, so none contains one.
        check(entries.allSatisfy { !$0.0.utf8.contains(0x7C) }, "a decoded name contains |")
    } else if dumpMode {
        print("session\t\(hex(input))\terror")
    }

    // The same bytes as a session file, through SessionFiles.load (which also
    // reads its own bookkeeping variables from it).
    let id = "abcdefghijklmnopqrstuv0123456789"
    let path = "\(scratchDirectory)/sess_\(id)"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    check(fd >= 0, "cannot write \(path)")
    let written = input.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    check(written == input.count, "short write to \(path)")
    let store = SessionFiles(directory: scratchDirectory, idleTimeout: 3600)
    do {
        if let session = try store.load(id: Array(id.utf8)) {
            check(session.id == id, "loaded session has id \(session.id)")
            if let entries = try? PHPSessionCodec.decode(input) {
                check(same(session.entries, entries), "load() and decode() disagree on \(show(input))")
            } else {
                check(session.entries.isEmpty, "an undecodable session file loaded with entries")
            }
        }
    } catch {
        check(false, "load() failed on a readable file: \(error)")
    }
    unlink(path)

    let built = build(input)
    let encoded = PHPSessionCodec.encode(built)
    do {
        let decoded = try PHPSessionCodec.decode(encoded)
        check(same(built, decoded), "built entries \(describe(built)) came back as \(describe(decoded))")
    } catch {
        check(false, "built entries \(describe(built)) encode to \(show(encoded)), which does not decode: \(error)")
    }
    return 0
}
