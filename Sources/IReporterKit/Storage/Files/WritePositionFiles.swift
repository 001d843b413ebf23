#if canImport(Glibc)
import Glibc
#endif

/// Each user's last write position in a file beside the sessions
/// (`ireporter-gtid-<IdUser>`, one per user, as `ireporter-sessions-<IdUser>`),
/// for one host's workers, or several hosts sharing the session folder.
/// Replaced whole by a rename, so a reader never sees half a position.
public final class WritePositionFiles: WritePositions {
    private let directory: String

    public init(directory: String) { self.directory = directory }

    private func path(of userID: Int64) -> String { "\(directory)/ireporter-gtid-\(userID)" }

    public func position(of userID: Int64) throws(SystemError) -> String? {
        let fd = open(path(of: userID), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw SystemError("open write position file")
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = read(fd, &buffer, buffer.count)
        guard count >= 0 else { throw SystemError("read write position file") }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    public func remember(_ position: String, of userID: Int64) throws(SystemError) {
        let target = path(of: userID)
        let temporary = "\(target).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError("create write position file") }
        let failed = Array(position.utf8).withUnsafeBytes { writeAll(fd, $0) }
        close(fd)
        guard failed == nil, rename(temporary, target) == 0 else {
            let code = failed ?? errno
            unlink(temporary)
            throw SystemError("write write position file", code: code)
        }
    }
}
