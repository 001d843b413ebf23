#if canImport(Glibc)
import Glibc
#endif

/// Writes every byte to `fd`, going on after interrupted or short writes;
/// returns errno on failure.
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    var offset = 0
    while offset < bytes.count {
        let written: Int
        do {
            written = try retryingInterrupted("write") { write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
        } catch {
            return error.code
        }
        if written == 0 { return EIO }
        offset += written
    }
    return nil
}

/// The entries of a directory (without `.` and `..`) with what `lstat`
/// says of each: symbolic links are not followed.
func directoryEntries(_ directory: String) throws(SystemError) -> [(name: String, info: stat)] {
    var entries: [(name: String, info: stat)] = []
    try forEachDirectoryEntry(directory) { name, directoryFD in
        var info = stat()
        if fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { entries.append((name, info)) }
    }
    return entries
}

/// Calls `body` with each entry's name (without `.` and `..`) and the
/// directory's descriptor, one at a time: a folder of millions of files is
/// never held in memory.
func forEachDirectoryEntry(_ directory: String, _ body: (_ name: String, _ directoryFD: Int32) -> Void) throws(SystemError) {
    try scanDirectory(directory) { name, directoryFD in
        body(name, directoryFD)
        return true
    }
}

/// `forEachDirectoryEntry` while `body` returns true: a look at a few
/// entries does not read the rest. Returns false when `body` stopped it.
@discardableResult
func scanDirectory(_ directory: String, while body: (_ name: String, _ directoryFD: Int32) -> Bool) throws(SystemError) -> Bool {
    guard let dir = opendir(directory) else { throw SystemError("open \(directory)") }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard name != ".", name != ".." else { continue }
        guard body(name, dirfd(dir)) else { return false }
    }
    return true
}

/// Zeroed memory shared with the processes forked after this call (the
/// worker scoreboard, rate-limit counters, the stream generation).
func sharedMemory(bytes: Int, for purpose: String) -> UnsafeMutableRawPointer {
    let memory = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
    precondition(memory != MAP_FAILED, "mmap of the \(purpose) failed")
    return memory!
}

/// A whole file's bytes, or nil if it cannot be read.
func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count == 0 { return ferror(file) == 0 ? bytes : nil }
        bytes += buffer[..<count]
    }
}
