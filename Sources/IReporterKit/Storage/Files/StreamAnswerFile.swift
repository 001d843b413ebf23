#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Synchronization

/// The 2012 `stream`'s rendered answer in a file that the host's nginx
/// answers the app's plain `stream` from (`stream_answer_file`,
/// deploy/nginx/ireporter-stream-answer.lua) without a FastCGI round trip:
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
/// nginx's workers keep the answer they read in memory (deploy/nginx/
/// ireporter-stream-answer.lua) while `<path>.epoch` counts what it counted
/// before they read the file: every removal counts one, under the lock, so
/// a worker reads the file once per answer, not at every request.
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
    /// 8 bytes, the removals counted (`StreamAnswerEpoch`), which nginx maps.
    var epochPath: String { "\(path).epoch" }
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
        // Unread: its access time before its change time (a read sets it to
        // now, which may be the same clock tick: see `state`).
        csystem_mark_unread(fd)
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
        // Without the lock (its file cannot be opened) no answer is put in place either: removed all the same.
        if !(locked(unlinkAnswer) ?? unlinkAnswer()) { logCannotRemove() }
    }

    private func logCannotRemove() {
        Log.error("stream_answer_file: cannot remove \(path): \(String(cString: strerror(errno)))")
    }

    /// Every removal of the answer: the file goes, then the count moves on,
    /// so an nginx worker's copy of it in memory goes too.
    private func unlinkAnswer() -> Bool {
        let unlinked = unlink(path) == 0 || errno == ENOENT
        let failure = errno
        StreamAnswerEpoch.advance(epochPath)
        errno = failure
        return unlinked
    }

    /// The host's listener (`listener`: its process) is subscribed to the
    /// other hosts' changes: answers may be kept from now on (none from
    /// before: it may have missed changes). The mark names it.
    func listen(as listener: pid_t = getpid()) {
        let made = locked { () -> Bool in
            _ = unlinkAnswer()
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
            return (!mine || unlink(self.listenerPath) == 0 || errno == ENOENT) && self.unlinkAnswer()
        }
        if !(locked(unlinked) ?? unlinked()) { logCannotRemove() }
    }

    /// When the kept answer ends (Unix ms) and whether it was read since it
    /// was made (its access time, set far back by `keep`, is at or after its
    /// change time: nginx read it, maybe in the clock tick it was made in:
    /// each nginx worker reads it once, at once if a stream asked for it);
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
        let read = (info.st_atim.tv_sec, info.st_atim.tv_nsec) >= (info.st_mtim.tv_sec, info.st_mtim.tv_nsec)
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

/// `<stream_answer_file>.epoch`, the answer's removals counted: 8 bytes
/// in the host's byte order that nginx's workers map and read at every
/// plain stream (an aligned word: read whole or not at all), comparing it
/// with the count they read before their copy of the file.
///
/// Mapped once per process and path, and kept: a worker inherits its
/// supervisor's mapping (the supervisor removes the answer at start, which
/// maps it), so a removal does not depend on opening a file. Made whole
/// under a temporary name and linked into place, so no process ever maps
/// a shorter file (nginx would die reading past its end) and two processes
/// making it at once end up on the same file; never made again in place.
enum StreamAnswerEpoch {
    private static let mapped = Mutex<[String: Int]>([:])  // path: the word's address

    /// Counts a removal; a count that cannot be mapped is logged (nginx's
    /// workers that mapped it may serve their copy until its end).
    static func advance(_ path: String) {
        guard let word = word(path) else { return }
        _ = csystem_add(word, 1)
    }

    private static func word(_ path: String) -> UnsafeMutablePointer<CLongLong>? {
        mapped.withLock { table in
            if let address = table[path] { return UnsafeMutablePointer(bitPattern: address) }
            guard let word = map(path) else { return nil }
            table[path] = Int(bitPattern: word)
            return word
        }
    }

    private static func map(_ path: String) -> UnsafeMutablePointer<CLongLong>? {
        var fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 && errno == ENOENT {
            create(path)
            fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        }
        guard fd >= 0 else { return failed("open \(path)") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size >= 8 else {
            return failed("use \(path) (not a regular file of 8 bytes)")
        }
        guard let memory = mmap(nil, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), memory != MAP_FAILED else {
            return failed("map \(path)")
        }
        return memory.bindMemory(to: CLongLong.self, capacity: 1)
    }

    /// 8 zero bytes under a name of this process's, linked as `path` (if
    /// another process made it meanwhile, its file stays).
    private static func create(_ path: String) {
        let temporary = "\(path).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        let written = [UInt8](repeating: 0, count: 8).withUnsafeBytes { writeAll(fd, $0) } == nil
        close(fd)
        if written { _ = link(temporary, path) }
        unlink(temporary)
    }

    private static func failed(_ what: String) -> UnsafeMutablePointer<CLongLong>? {
        Log.error("stream_answer_file: cannot \(what): \(String(cString: strerror(errno))) (nginx's workers may answer "
                  + "the stream from before a change until their copy ends)")
        return nil
    }
}

/// The wall clock in Unix milliseconds (what nginx's `ngx.now()` reads).
public func realtimeMillis() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
