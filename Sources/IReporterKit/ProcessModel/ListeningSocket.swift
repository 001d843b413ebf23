#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The FastCGI listening socket: one we open (a unix path or HOST:PORT), or
/// the one a spawner (spawn-fcgi, mod_fcgid, systemd) left on fd 0.
///
/// A server that died outright (kill -9, the OOM killer) may leave workers
/// finishing their request in hand on its socket for a moment: a new server
/// takes the address over at once (a unix path: the dead server's lock is
/// gone) or as soon as they are done (HOST:PORT).
public struct ListeningSocket {
    public let fd: Int32
    /// The unix socket path we created, removed again when we stop.
    public let ownedPath: String?
    /// What that path named once bound (device, inode): another server's
    /// socket bound there since (systemd's, a successor's) is not ours to remove.
    private var ownedNode: (device: UInt, inode: UInt)?

    init(fd: Int32, ownedPath: String?) {
        (self.fd, self.ownedPath) = (fd, ownedPath)
        var info = stat()
        if let ownedPath, stat(ownedPath, &info) == 0 { ownedNode = (UInt(info.st_dev), UInt(info.st_ino)) }
    }

    /// Removes the path we bound, if it still names our socket.
    public func removeOwnedPath() {
        guard let ownedPath, let ownedNode else { return }
        var info = stat()
        guard stat(ownedPath, &info) == 0 else { return }  // removed already
        guard (UInt(info.st_dev), UInt(info.st_ino)) == ownedNode else {
            Log.warning("\(ownedPath) is another socket now: left in place")
            return
        }
        unlink(ownedPath)
    }
    /// How long a new server waits for a HOST:PORT the workers of a dead one
    /// still listen on (at most the request in hand each).
    static let takeOverWaitMillis: Int64 = 10_000

    /// The socket systemd passed (fd 3, `LISTEN_FDS`/`LISTEN_PID`).
    public static func fromSystemd() -> ListeningSocket? {
        guard let count = getenv("LISTEN_FDS").flatMap({ Int(String(cString: $0)) }), count >= 1,
              getenv("LISTEN_PID").flatMap({ Int32(String(cString: $0)) }) == getpid(), isListening(3) else { return nil }
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_PID")
        return ListeningSocket(fd: 3, ownedPath: nil)
    }

    /// The socket a spawner (spawn-fcgi, mod_fcgid) left on fd 0.
    public static func fromStandardInput() -> ListeningSocket? {
        isListening(0) ? ListeningSocket(fd: 0, ownedPath: nil) : nil
    }

    private static func isListening(_ fd: Int32) -> Bool {
        var accepting: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0 && accepting != 0
    }

    /// Gives the socket we made to `listen_owner` and `listen_group`, by
    /// default `user` and its group (when root: `user` is whom the server
    /// becomes); each left as it is when nothing names one.
    static func changeOwner(_ path: String, owner: String, group: String, user: String) throws(SystemError) {
        var uid = uid_t.max, gid = gid_t.max
        if !user.isEmpty, getuid() == 0 {
            guard let entry = getpwnam(user) else { throw SystemError("unknown user \(user)", code: ENOENT) }
            (uid, gid) = (entry.pointee.pw_uid, entry.pointee.pw_gid)
        }
        if !owner.isEmpty {
            guard let entry = getpwnam(owner) else { throw SystemError("unknown listen_owner \(owner)", code: ENOENT) }
            uid = entry.pointee.pw_uid
        }
        if !group.isEmpty {
            guard let entry = getgrnam(group) else { throw SystemError("unknown listen_group \(group)", code: ENOENT) }
            gid = entry.pointee.gr_gid
        }
        guard uid != uid_t.max || gid != gid_t.max else { return }
        guard chown(path, uid, gid) == 0 else { throw SystemError("chown \(path)") }
    }

    public static func open(_ address: String, mode: mode_t, backlog: Int32) throws(SystemError) -> ListeningSocket {
        if address.hasPrefix("/") || address.hasPrefix(".") {
            return try openUnix(address, mode: mode, backlog: backlog)
        }
        return try openTCP(address, backlog: backlog)
    }

    private static func openUnix(_ path: String, mode: mode_t, backlog: Int32) throws(SystemError) -> ListeningSocket {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw SystemError("socket path too long: \(path)", code: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
        try lockAddress(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        // Left by a previous server: removed, or taken from the workers it
        // left finishing their request (they exit without serving the queue).
        if connectsToListener(path) {
            Log.warning("workers of a server that died are finishing on \(path): taking the socket over")
        }
        unlink(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { let error = SystemError("bind \(path)"); close(fd); throw error }
        chmod(path, mode)
        guard listen(fd, backlog) == 0 else { let error = SystemError("listen \(path)"); close(fd); throw error }
        return ListeningSocket(fd: fd, ownedPath: path)
    }

    /// `PATH.lock`, locked for as long as this process lives (the lock is
    /// not inherited by the workers): another server there refuses to start.
    private static func lockAddress(_ path: String) throws(SystemError) {
        let lockPath = path + ".lock"
        let fd = Glibc.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SystemError("open \(lockPath)") }
        guard csystem_lock_for_this_process(fd) == 0 else {
            let code = errno
            close(fd)
            throw code == EAGAIN || code == EACCES
                ? SystemError("another server is listening on \(path) (it holds \(lockPath))", code: EADDRINUSE)
                : SystemError("lock \(lockPath)", code: code)
        }
        // Kept open: closing any descriptor of the file would drop the lock.
    }

    private static func connectsToListener(_ path: String) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    private static func openTCP(_ address: String, backlog: Int32) throws(SystemError) -> ListeningSocket {
        let info = try resolve(address)
        defer { freeaddrinfo(info) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        let clock = MonotonicClock() // real time: it sleeps between tries
        let deadline = clock.now.advanced(byMillis: takeOverWaitMillis)
        while bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
            let error = SystemError("bind \(address)")
            guard error.code == EADDRINUSE, clock.now < deadline else { close(fd); throw error }
            usleep(100_000)
        }
        guard listen(fd, backlog) == 0 else { let error = SystemError("listen \(address)"); close(fd); throw error }
        return ListeningSocket(fd: fd, ownedPath: nil)
    }

    /// HOST:PORT as bind(2) takes it; freed with freeaddrinfo.
    private static func resolve(_ address: String) throws(SystemError) -> UnsafeMutablePointer<addrinfo> {
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw SystemError("listen address must be a unix socket path or HOST:PORT, not \(address)", code: EINVAL)
        }
        var host = String(address[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty || host == "*" { host = "0.0.0.0" }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let info = results else {
            throw SystemError("resolve \(host): \(String(cString: gai_strerror(status)))", code: EINVAL)
        }
        return info
    }

    /// What `ireporter check` says of a `listen` address, tried without
    /// taking it from a server that has it.
    enum Probe: Equatable {
        case usable(String)
        /// Something listens there already: a running server, or another program.
        case inUse(String)
        case unusable(String)
    }

    static func probe(_ address: String) -> Probe {
        if address.hasPrefix("/") || address.hasPrefix(".") {
            let folder = address.lastIndex(of: "/").map { String(address[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
            if connectsToListener(address) { return .inUse("\(address) is in use (by a running server?)") }
            guard access(folder, W_OK | X_OK) == 0 else {
                return .unusable("cannot make \(address): its folder \(folder): \(String(cString: strerror(errno)))")
            }
            return .usable("\(address) can be made (\(folder) is writable)")
        }
        let info: UnsafeMutablePointer<addrinfo>
        do { info = try resolve(address) } catch { return .unusable(error.description) }
        defer { freeaddrinfo(info) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .unusable(SystemError("socket").description) }
        defer { close(fd) }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let error = SystemError("bind \(address)")
            return error.code == EADDRINUSE ? .inUse("\(address) is in use (by a running server?)") : .unusable(error.description)
        }
        return .usable("\(address) can be bound")
    }
}
