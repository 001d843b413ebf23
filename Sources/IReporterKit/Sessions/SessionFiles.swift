#if canImport(Glibc)
import Glibc
#endif

/// PHP-compatible file sessions: `<dir>/sess_<id>`, in PHP's serialization
/// and with PHP's locking (flock), so the PHP version and this server can
/// share one session directory.
///
/// Unlike PHP's defaults it is strict: an id is only ever looked up when it
/// is well-formed, a file is only created for a fresh id from the CSPRNG, and
/// nothing is written for a visitor who has nothing to store. Only files this
/// server's user owns, that no one else may write, are sessions: Debian's
/// `/var/lib/php/sessions` is `1733`, where anyone may create `sess_<id>`.
///
/// Each user's live sessions are listed, oldest first, in an index file
/// `ireporter-sessions-<IdUser>` beside them (PHP's clean-up only touches
/// `sess_*`), so that a login finds that user's sessions without reading the
/// folder and drops the oldest beyond `maxPerUser`, and a new password ends
/// the others.
public struct SessionFiles: SessionStore, Sendable {
    public let directory: String
    public let idleTimeout: Int
    /// However active, a session ends this long after the login that made it.
    public let absoluteTimeout: Int
    /// Live sessions kept per user (the oldest go first); 0 = no limit.
    public let maxPerUser: Int
    /// Compared with the files' times (the kernel's, PHP's): the time of day.
    public let clock: any WallClock

    public init(directory: String, idleTimeout: Int, absoluteTimeout: Int = 30 * 24 * 3600, maxPerUser: Int = 0,
                clock: any WallClock = RealtimeClock()) {
        self.directory = directory
        self.idleTimeout = idleTimeout
        self.absoluteTimeout = absoluteTimeout
        self.maxPerUser = maxPerUser
        self.clock = clock
    }

    private func path(for id: String) -> String { "\(directory)/sess_\(id)" }
    private static let indexPrefix = "ireporter-sessions-"
    private func indexPath(user: Int64) -> String { "\(directory)/\(Self.indexPrefix)\(user)" }

    /// Not blocking: a FIFO planted under a session's name would hold the
    /// open (its owner is checked before any lock, which a planted file's
    /// owner could hold).
    private static func openFlags(_ access: Int32) -> Int32 { access | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK }

    /// Ours: made by this server's user, and no one else may change it.
    private static func isOwnFile(_ info: stat) -> Bool {
        info.st_mode & S_IFMT == S_IFREG && info.st_uid == geteuid() && info.st_mode & (S_IWGRP | S_IWOTH) == 0
    }

    /// The session with this id, if its file exists and has not expired.
    public func load(id rawID: [UInt8]) throws(SystemError) -> Session? {
        guard SessionID.isWellFormed(rawID) else { return nil }
        let id = String(decoding: rawID, as: UTF8.self)
        let fd = open(path(for: id), Self.openFlags(O_RDONLY))
        guard fd >= 0 else {
            if errno == ENOENT || errno == ELOOP { return nil }
            // Another user's file, unreadable to us: not a session either.
            if errno == EACCES {
                Log.warning("ignoring \(path(for: id)): not readable by uid \(geteuid()): a forged session?")
                return nil
            }
            throw SystemError("open session file")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError("stat session file") }
        guard Self.isOwnFile(info) else {
            Log.warning("ignoring \(path(for: id)): not a file of uid \(geteuid()) that only it may write "
                        + "(uid \(info.st_uid), mode \(String(info.st_mode & 0o7777, radix: 8))): a forged session?")
            return nil
        }
        // PHP holds LOCK_EX for a whole request: wait for it to finish writing.
        try retryingInterrupted("lock session file") { flock(fd, LOCK_SH) }
        guard fstat(fd, &info) == 0 else { throw SystemError("stat session file") }
        guard info.st_size <= 1 << 20 else { return nil }
        let now = clock.unixSeconds
        if now - Int64(info.st_mtim.tv_sec) > idleTimeout { return nil }
        var data = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = data.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count == data.count else { throw SystemError("read session file") }
        // Mark it used (for the idle timeout), at most once a minute.
        if now - Int64(info.st_mtim.tv_sec) > 60 { markUsed(fd, at: now) }
        guard let entries = try? PHPSessionCodec.decode(data) else { return Session(id: id, entries: []) }
        let session = Session(id: id, entries: entries)
        if let created = session[Session.createdKey]?.intValue, created < now - Int64(absoluteTimeout) {
            return nil
        }
        return session
    }

    /// Stores the variables under a fresh id (never an id the client chose),
    /// then ends the user's oldest sessions beyond `maxPerUser`.
    public func create(_ variables: [(String, PHPValue)], user: Int64) throws(SystemError) -> Session {
        let session = try create(variables)
        _ = try updateIndex(of: user) { live in
            live.append(session.id)
            if maxPerUser > 0 && live.count > maxPerUser {
                for old in live.prefix(live.count - maxPerUser) { destroy(id: old) }
                live.removeFirst(live.count - maxPerUser)
            }
        }
        return session
    }

    public func endSessions(of user: Int64, except kept: String?) throws(SystemError) {
        let updated = try updateIndex(of: user) { live in
            for id in live where id != kept { destroy(id: id) }
            live.removeAll { $0 != kept }
        }
        // A planted index: the sessions it should list may live on.
        guard updated else { throw SystemError("end the sessions of user \(user): their index is not ours", code: EPERM) }
    }

    private func create(_ variables: [(String, PHPValue)]) throws(SystemError) -> Session {
        let entries = variables + [(Session.createdKey, .int(clock.unixSeconds))]
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

    /// Rewrites the user's index (under its lock, so concurrent logins each
    /// see the others) with `change` made to its live sessions, oldest
    /// first (those that ended are forgotten); false when the index is not
    /// ours to trust (then untouched).
    private func updateIndex(of user: Int64, _ change: (inout [String]) -> Void) throws(SystemError) -> Bool {
        let index = indexPath(user: user)
        let fd = open(index, Self.openFlags(O_RDWR | O_CREAT), 0o600)
        guard fd >= 0 else {
            // Planted where anyone may create files (a symbolic link, a folder,
            // another user's file): as for an index not ours, logins go on.
            guard [ELOOP, EACCES, EPERM, EISDIR, ENXIO].contains(errno) else { throw SystemError("open \(index)") }
            Log.warning("ignoring \(index): not openable by uid \(geteuid()) (\(String(cString: strerror(errno)))); "
                        + "sessions are not capped")
            return false
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError("stat \(index)") }
        guard Self.isOwnFile(info) else {
            Log.warning("ignoring \(index): not a file of uid \(geteuid()) that only it may write; sessions are not capped")
            return false
        }
        try retryingInterrupted("lock \(index)") { flock(fd, LOCK_EX) }
        guard fstat(fd, &info) == 0 else { throw SystemError("stat \(index)") }
        guard info.st_size <= 1 << 20 else {
            Log.warning("ignoring \(index): over 1 MiB; sessions are not capped")
            return false
        }
        var text = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = text.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count == text.count else { throw SystemError("read \(index)") }
        var live = text.split(separator: UInt8(ascii: "\n")).filter { line in
            var entry = stat()
            return SessionID.isWellFormed(Array(line))
                && lstat(path(for: String(decoding: line, as: UTF8.self)), &entry) == 0
        }.map { String(decoding: $0, as: UTF8.self) }
        change(&live)
        let updated = Array(live.map { $0 + "\n" }.joined().utf8)
        guard ftruncate(fd, 0) == 0,
              updated.withUnsafeBytes({ pwrite(fd, $0.baseAddress, $0.count, 0) }) == updated.count else {
            throw SystemError("write \(index)")
        }
        return true
    }

    /// Sets the file's times to `now` (on the clock its age is read on).
    private func markUsed(_ fd: Int32, at now: Int64) {
        let times = [timespec](repeating: timespec(tv_sec: Int(now), tv_nsec: 0), count: 2)
        futimens(fd, times)
    }

    /// Deletes a session's file (logout, or the old id after a login).
    public func destroy(id: String) {
        let fd = open(path(for: id), Self.openFlags(O_RDONLY))
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, Self.isOwnFile(info) else { return }
        _ = try? retryingInterrupted("lock session file") { flock(fd, LOCK_EX) }
        unlink(path(for: id))
    }

    /// Removes session files idle for longer than the timeout; returns how
    /// many. A user's index goes once it is older than any session it lists
    /// can live (each login rewrites it).
    @discardableResult
    public func sweep() -> Int {
        guard let entries = try? directoryEntries(directory) else { return 0 }
        let now = clock.unixSeconds
        for (name, info) in entries where name.hasPrefix(Self.indexPrefix) && Self.isOwnFile(info)
            && now - Int64(info.st_mtim.tv_sec) > absoluteTimeout {
            unlink("\(directory)/\(name)")
        }
        return entries.filter { name, info in
            name.hasPrefix("sess_") && now - Int64(info.st_mtim.tv_sec) > idleTimeout && unlink("\(directory)/\(name)") == 0
        }.count
    }
}
