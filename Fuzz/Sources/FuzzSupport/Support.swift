#if canImport(Glibc)
import Glibc
#endif

/// Stops the run with a message when an oracle is violated. libFuzzer sees
/// the trap as a crash and saves the input as `crash-<sha1>`.
public func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                  file: StaticString = #fileID, line: UInt = #line) {
    if !condition() {
        let text = "FUZZ ORACLE FAILED (\(file):\(line)): \(message())\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
        fatalError("fuzz oracle failed")
    }
}

/// The input as bytes (copied: the harness may keep slices around).
public func bytes(_ data: UnsafePointer<UInt8>, _ size: Int) -> [UInt8] {
    Array(UnsafeBufferPointer(start: data, count: size))
}

/// Printable form of bytes for failure messages (capped).
public func show<C: Collection>(_ bytes: C, limit: Int = 200) -> String where C.Element == UInt8 {
    var out = "\""
    for byte in bytes.prefix(limit) {
        switch byte {
        case 0x20..<0x7F where byte != 0x22 && byte != 0x5C: out.unicodeScalars.append(Unicode.Scalar(byte))
        default: out += "\\x" + String(byte, radix: 16).leftPadded(to: 2)
        }
    }
    return out + (bytes.count > limit ? "…\" (\(bytes.count) bytes)" : "\"")
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// A small deterministic PRNG (SplitMix64), seeded from the input, so that a
/// saved crash input replays exactly.
public struct SplitMix64 {
    var state: UInt64
    public init<C: Collection>(seedingWith bytes: C) where C.Element == UInt8 {
        // FNV-1a of the input.
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100000001b3 }
        state = hash
    }
    public mutating func next() -> UInt64 {
        state &+= 0x9e3779b97f4a7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58476d1ce4e5b9
        z = (z ^ (z >> 27)) &* 0x94d049bb133111eb
        return z ^ (z >> 31)
    }
    public mutating func next(below bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
}

/// A private scratch directory (on tmpfs when /dev/shm exists): FUZZ_SPOOL_DIR
/// if set (run.sh sets it and removes it afterwards), else
/// `ireporter-fuzz-<pid>`, removed at exit; a crash ends the process without
/// that, so directories of processes that are gone are removed at start.
public let scratchDirectory: String = {
    if let dir = getenv("FUZZ_SPOOL_DIR") {
        let path = String(cString: dir)
        mkdir(path, 0o700)
        return path
    }
    let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    for name in listDirectory(base) where name.hasPrefix("ireporter-fuzz-") {
        if let pid = Int32(name.dropFirst("ireporter-fuzz-".count)), kill(pid, 0) != 0, errno == ESRCH {
            removeTree("\(base)/\(name)")
        }
    }
    let path = "\(base)/ireporter-fuzz-\(getpid())"
    removeTree(path)
    guard mkdir(path, 0o700) == 0 else { fatalError("cannot create \(path): \(errno)") }
    madeScratch = path
    atexit { if let path = madeScratch { removeTree(path) } }
    return path
}()

/// Removes a directory and the files in it (the harnesses make no subdirectories).
func removeTree(_ path: String) {
    for name in listDirectory(path) { unlink("\(path)/\(name)") }
    rmdir(path)
}

nonisolated(unsafe) private var madeScratch: String?

/// The names in a directory, without `.` and `..`.
public func listDirectory(_ path: String) -> [String] {
    guard let dir = opendir(path) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// A whole file's bytes, or nil if it cannot be opened.
public func readFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        out += buffer[..<count]
    }
    return out
}

/// Whether a harness should print what it computed (for the PHP differential
/// check, `Fuzz/php-diff.sh`): FUZZ_DUMP=1, with the inputs given as files.
public let dumpMode: Bool = getenv("FUZZ_DUMP") != nil

/// Lower-case hex of bytes (the dump format).
public func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 15)]) }
    return String(decoding: out, as: UTF8.self)
}
