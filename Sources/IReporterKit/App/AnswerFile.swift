#if canImport(Glibc)
import Glibc
#endif

/// An answer too large to hold in memory (`export`'s zip): a file the
/// command wrote, open for reading, that the gateway sends in chunks after
/// the head. Its name is already removed (a spool file); the data goes when
/// the descriptor closes.
public final class AnswerFile: Sendable {
    private let fd: Int32
    public let size: Int
    /// The name a browser saves it under (`Content-Disposition: attachment`).
    public let downloadName: String

    /// Takes over `fd`, a file of `size` bytes.
    init(fd: Int32, size: Int, downloadName: String) {
        (self.fd, self.size, self.downloadName) = (fd, size, downloadName)
    }

    deinit { close(fd) }

    /// Calls `send` with each chunk, in order, until the end or until `send`
    /// returns false (the client went away); false when not all was sent.
    func send(chunkSize: Int = 256 * 1024, _ send: ([UInt8]) -> Bool) -> Bool {
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var offset = 0
        while offset < size {
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, min($0.count, size - offset), off_t(offset)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                Log.error("answer file: read at \(offset) of \(size): \(count < 0 ? String(cString: strerror(errno)) : "early end")")
                return false
            }
            guard send(Array(chunk[..<count])) else { return false }
            offset += count
        }
        return true
    }
}
