#if canImport(Glibc)
import Glibc
#endif

/// PHP-compatible file sessions: `<dir>/sess_<id>`, in PHP's serialization
/// and with PHP's locking (flock), so the PHP version and this server can
/// share one session directory.
///
/// Unlike PHP's defaults it is strict: an id is only ever looked up when it
/// is well-formed, a file is only created for a fresh id from the CSPRNG, and
/// nothing is written for a visitor who has nothing to store.
public struct SessionFiles: SessionStore, Sendable {
    public let directory: String
    public let idleTimeout: Int
    /// However active, a session ends this long after the login that made it.
    public let absoluteTimeout: Int

    public init(directory: String, idleTimeout: Int, absoluteTimeout: Int = 30 * 24 * 3600) {
        self.directory = directory
        self.idleTimeout = idleTimeout
        self.absoluteTimeout = absoluteTimeout
    }

    private func path(for id: String) -> String { "\(directory)/sess_\(id)" }

    /// The session with this id, if its file exists and has not expired.
    public func load(id rawID: [UInt8]) throws(SystemError) -> Session? {
        guard SessionID.isWellFormed(rawID) else { return nil }
        let id = String(decoding: rawID, as: UTF8.self)
        let fd = open(path(for: id), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ELOOP { return nil }
            throw SystemError("open session file")
        }
        defer { close(fd) }
        // PHP holds LOCK_EX for a whole request: wait for it to finish writing.
        try retryingInterrupted("lock session file") { flock(fd, LOCK_SH) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError("stat session file") }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_size <= 1 << 20 else { return nil }
        let now = time(nil)
        if Int(now) - Int(info.st_mtim.tv_sec) > idleTimeout { return nil }
        var data = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = data.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count == data.count else { throw SystemError("read session file") }
        // Mark it used (for the idle timeout), at most once a minute.
        if Int(now) - Int(info.st_mtim.tv_sec) > 60 { futimens(fd, nil) }
        guard let entries = try? PHPSessionCodec.decode(data) else { return Session(id: id, entries: []) }
        let session = Session(id: id, entries: entries)
        if let created = session[Session.createdKey]?.intValue, created < Int64(now) - Int64(absoluteTimeout) {
            return nil
        }
        return session
    }

    /// Stores the variables under a fresh id (never an id the client chose).
    public func create(_ variables: [(String, PHPValue)]) throws(SystemError) -> Session {
        let entries = variables + [(Session.createdKey, .int(Int64(time(nil))))]
        while true {
            let id = SessionID.new()
            let fd = open(path(for: id), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw SystemError("create session file")
            }
            defer { close(fd) }
            let data = PHPSessionCodec.encode(entries)
            let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == data.count else {
                let code = errno
                unlink(path(for: id))
                throw SystemError("write session file", code: code)
            }
            return Session(id: id, entries: entries)
        }
    }

    /// Deletes a session's file (logout, or the old id after a login).
    public func destroy(id: String) {
        let fd = open(path(for: id), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = try? retryingInterrupted("lock session file") { flock(fd, LOCK_EX) }
        unlink(path(for: id))
    }

    /// Removes session files idle for longer than the timeout; returns how many.
    @discardableResult
    public func sweep() -> Int {
        guard let entries = try? directoryEntries(directory) else { return 0 }
        let now = Int(time(nil))
        return entries.filter { name, info in
            name.hasPrefix("sess_") && now - Int(info.st_mtim.tv_sec) > idleTimeout && unlink("\(directory)/\(name)") == 0
        }.count
    }
}
