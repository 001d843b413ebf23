#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The 2012 `stream`'s rendered answer in a file that the host's nginx
/// answers the app's plain `stream` from (`stream_answer_file`,
/// deploy/nginx/ireporter-stream-answer.js) without a FastCGI round trip:
/// the per-connection ceiling a FastCGI server cannot pass (issue 30).
///
/// Its first line is when it ends (Unix milliseconds: nginx reads the wall
/// clock), so that a change behind the installation's back shows within
/// `stream_cache_ms` and a file left by a stopped server is not served;
/// the answer's bytes follow.
///
/// Read-your-writes: every change of the stream (the host's counters bump
/// the generation) removes the file before the change is answered, and an
/// answer is put in place only if the generation it was rendered under is
/// still the current one, checked under the same lock as the removal, so
/// an answer rendered before a change is never served after it. The lock is
/// a `flock` on `<path>.lock`, each process on a descriptor of its own.
///
/// With several hosts (Redis), a change on another host reaches this one
/// as a message (`RedisStreamChanges`): an answer is then put in place only
/// while the host's listener is subscribed, which it says with the file
/// `<path>.listening`, made and removed under the same lock.
public final class StreamAnswerFile: @unchecked Sendable {
    public let path: String
    private let maxAgeMillis: Int64
    /// Answers are kept only while `<path>.listening` exists (several hosts).
    private let needsListener: Bool
    var listenerPath: String { "\(path).listening" }
    /// The directory it is made in (where its temporary and lock files go too).
    var folder: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
    private let unixMillis: @Sendable () -> Int64
    /// This process's descriptor of the lock file (a forked child opens its
    /// own: a `flock` on an inherited one would not exclude the parent).
    /// Unsynchronised: a process serves one request at a time.
    private var lockFile: (process: pid_t, fd: Int32)?
    /// A failure to write is said once per process, not at every stream.
    private var failureLogged = false

    public init(path: String, maxAgeMillis: Int64, needsListener: Bool = false,
                unixMillis: @escaping @Sendable () -> Int64 = realtimeMillis) {
        self.path = path
        self.maxAgeMillis = maxAgeMillis
        self.needsListener = needsListener
        self.unixMillis = unixMillis
    }

    deinit { if let lockFile, lockFile.process == getpid() { close(lockFile.fd) } }

    /// Puts `answer` in place if the stream is still at `generation` (what
    /// `currentGeneration` reads now, under the lock); false when it is not
    /// or the file cannot be written (then nginx asks the server, as before).
    @discardableResult
    func keep(_ answer: [UInt8], madeUnder generation: Int64, currentGeneration: () -> Int64?) -> Bool {
        let temporary = "\(path).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return failed("create \(temporary)") }
        let content = Array("\(unixMillis() + maxAgeMillis)\n".utf8) + answer
        let writeError = content.withUnsafeBytes { writeAll(fd, $0) }
        close(fd)
        guard writeError == nil else {
            unlink(temporary)
            errno = writeError!
            return failed("write \(temporary)")
        }
        let placed = locked { () -> Bool in
            guard !needsListener || access(listenerPath, F_OK) == 0, currentGeneration() == generation else { return false }
            return rename(temporary, path) == 0
        }
        if placed != true { unlink(temporary) }
        return placed == true
    }

    /// The stream changed: nginx asks the server from now on, until an
    /// answer of the new generation is kept. A file that cannot be removed
    /// would be served stale, so the failure is logged as an error.
    func remove() {
        let unlinked = { unlink(self.path) == 0 || errno == ENOENT }
        // Without the lock (its file cannot be opened) no answer is put in place either: removed all the same.
        if !(locked(unlinked) ?? unlinked()) { Log.error("stream_answer_file: cannot remove \(path): \(String(cString: strerror(errno)))") }
    }

    /// The host's listener (`listener`: its process) is subscribed to the
    /// other hosts' changes: answers may be kept from now on (none from
    /// before: it may have missed changes). The mark names it.
    func listen(as listener: pid_t = getpid()) {
        let made = locked { () -> Bool in
            _ = unlink(path)
            let fd = open(listenerPath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            return Array(String(listener).utf8).withUnsafeBytes { writeAll(fd, $0) } == nil
        }
        if made != true { Log.error("stream_answer_file: cannot create \(listenerPath): \(String(cString: strerror(errno)))") }
    }

    /// Nobody listens for the other hosts' changes any more (its process
    /// ended, a start, a reload): no answer is kept until one does.
    public func stopListening() { stopListening(onlyIf: nil) }

    /// `listener` lost Redis: its mark goes, unless another listener's
    /// replaced it (a reload's new refresher, subscribed meanwhile).
    func stopListening(as listener: pid_t) { stopListening(onlyIf: listener) }

    private func stopListening(onlyIf listener: pid_t?) {
        let unlinked = { () -> Bool in
            let mine = listener.map { readFile(self.listenerPath).map { String(decoding: $0, as: UTF8.self) } == String($0) } ?? true
            return (!mine || unlink(self.listenerPath) == 0 || errno == ENOENT) && (unlink(self.path) == 0 || errno == ENOENT)
        }
        if !(locked(unlinked) ?? unlinked()) { Log.error("stream_answer_file: cannot remove \(path): \(String(cString: strerror(errno)))") }
    }

    /// When the kept answer ends (Unix ms) and whether it was read since it
    /// was made (its access time is after its change time: nginx read it);
    /// nil without one. Read without touching its access time.
    func state() -> (endsAt: Int64, read: Bool)? {
        let fd = csystem_open_noatime(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 24)
        let count = read(fd, &head, head.count)
        var info = stat()
        guard count > 0, fstat(fd, &info) == 0, let newline = head[..<count].firstIndex(of: UInt8(ascii: "\n")),
              let endsAt = Int64(String(decoding: head[..<newline], as: UTF8.self)) else { return nil }
        let read = (info.st_atim.tv_sec, info.st_atim.tv_nsec) > (info.st_mtim.tv_sec, info.st_mtim.tv_nsec)
        return (endsAt, read)
    }

    /// Whether the kept answer is read and within `lead` of its end: made
    /// again ahead by the answer refresher, so that nginx never finds it ended.
    func isDue(lead: Int64) -> Bool {
        guard let state = state() else { return false }
        return state.read && state.endsAt - unixMillis() <= lead
    }

    /// `body`'s result holding the lock; nil when the lock file cannot be opened (logged).
    private func locked<R>(_ body: () -> R) -> R? {
        let pid = getpid()
        if lockFile?.process != pid {
            let fd = open("\(path).lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                Log.error("stream_answer_file: cannot open \(path).lock: \(String(cString: strerror(errno)))")
                return nil
            }
            lockFile = (pid, fd)
        }
        let fd = lockFile!.fd
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        defer { flock(fd, LOCK_UN) }
        return body()
    }

    private func failed(_ what: String) -> Bool {
        if !failureLogged {
            failureLogged = true
            Log.warning("stream_answer_file: cannot \(what): \(String(cString: strerror(errno))) (nginx asks the server)")
        }
        return false
    }
}

/// The wall clock in Unix milliseconds (what nginx's `Date.now()` reads).
public func realtimeMillis() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
