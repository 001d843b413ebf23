#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// A temporary file (`.spool-XXXXXX`) in a given directory, created 0600.
/// Kept on the upload directory's own file system, so that publishing it is
/// a rename; removed by `discard()` unless it was handed on.
public final class SpoolFile {
    public let path: String
    private var fd: Int32

    public init(directory: String) throws(SystemError) {
        var template = Array("\(directory)/.spool-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { csystem_mkstemp_cloexec($0.baseAddress!) }
        guard fd >= 0 else { throw SystemError("create a spool file in \(directory)") }
        self.fd = fd
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Its descriptor goes with it: a write that failed skips the close
    /// after it, and a worker must not run out of descriptors for that.
    deinit { _ = close() }

    /// Writes every byte; returns errno on failure.
    public func write(_ bytes: UnsafeRawBufferPointer) -> Int32? {
        writeAll(fd, bytes)
    }

    /// Makes the file readable by all (0644, whatever the umask); returns errno on failure.
    public func makeReadable() -> Int32? {
        fchmod(fd, 0o644) == 0 ? nil : errno
    }

    /// Closes the descriptor; returns errno on failure.
    public func close() -> Int32? {
        guard fd >= 0 else { return nil }
        let result = Glibc.close(fd)
        fd = -1
        return result == 0 ? nil : errno
    }

    public func discard() {
        _ = close()
        unlink(path)
    }

    /// Runs `body` on a spool file in `directory` holding `bytes` (the
    /// decoders read files), removed after.
    static func withFile<Result>(holding bytes: [UInt8], in directory: String, _ body: (String) throws -> Result) throws -> Result {
        let spool = try SpoolFile(directory: directory)
        defer { spool.discard() }
        if let code = bytes.withUnsafeBytes({ spool.write($0) }) ?? spool.close() {
            throw SystemError("write \(spool.path)", code: code)
        }
        return try body(spool.path)
    }
}
