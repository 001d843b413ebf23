#if canImport(Glibc)
import Glibc
#endif

/// The process: configuration, listening socket, privileges, workers,
/// signals, session clean-up.
public enum Server {
    public static let version = "0.1.0"

    /// How long in-flight requests may take to finish after SIGTERM.
    static let drainSeconds = 30
    /// How often expired session files are removed.
    static let sessionSweepSeconds: UInt32 = 600

    public static func run(_ configuration: Configuration) -> Int32 {
        // Before FCGX_Init: libfcgi installs its own SIGTERM/SIGUSR1 handlers
        // only where none is set, and they would merely set a flag.
        signal(SIGPIPE, SIG_IGN)
        var wakeAction = sigaction()
        wakeAction.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&wakeAction.sa_mask)
        wakeAction.sa_flags = 0 // no SA_RESTART: the signal must interrupt accept()
        sigaction(WorkerPool.wakeSignal, &wakeAction, nil)
        var handled = sigset_t()
        sigemptyset(&handled)
        for signal in [SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2, WorkerPool.wakeSignal] {
            sigaddset(&handled, signal)
        }
        pthread_sigmask(SIG_BLOCK, &handled, nil) // threads inherit it

        guard FastCGIRequest.initializeLibrary() else {
            Log.error("FCGX_Init failed")
            return 1
        }
        DatabaseConnection.initializeLibrary()

        let socket: ListeningSocket
        do {
            if configuration.listen.isEmpty {
                guard let inherited = ListeningSocket.inherited() else {
                    Log.error("no listen address configured and fd 0 is not a listening socket (see --help)")
                    return 2
                }
                socket = inherited
            } else {
                socket = try ListeningSocket.open(configuration.listen, mode: configuration.listenMode,
                                                  backlog: configuration.listenBacklog)
            }
            if !configuration.user.isEmpty { try dropPrivileges(to: configuration.user, socketPath: socket.ownedPath) }
        } catch {
            Log.error("\(error)")
            return 1
        }
        for (name, directory) in [("upload_dir", configuration.uploadDirectory),
                                  ("session_dir", configuration.sessionDirectory)]
            where access(directory, W_OK | X_OK) != 0 {
            Log.error("\(name) \(directory) is not writable: \(String(cString: strerror(errno)))")
            return 1
        }
        if !configuration.pidFile.isEmpty { writePIDFile(configuration.pidFile) }

        let sessions = SessionStore(directory: configuration.sessionDirectory,
                                    idleTimeout: configuration.sessionIdleTimeout)
        let files = PhotoFiles(directory: configuration.uploadDirectory)
        let limits = IReporterAPI.Limits(maxImagePixels: configuration.maxImagePixels,
                                         maxUploadBytes: configuration.maxUploadBytes)
        let pool = WorkerPool(listenFD: socket.fd) {
            let database = DatabaseConnection(settings: configuration.database)
            let api = IReporterAPI(database: database, sessions: sessions, files: files, limits: limits)
            return APIResponder(api: api, uploadDirectory: configuration.uploadDirectory,
                                maxUploadBytes: configuration.maxUploadBytes)
        }
        pool.start(workers: configuration.workers)
        _ = spawnThread {
            while true {
                let removed = sessions.sweep()
                if removed > 0 { Log.info("removed \(removed) expired session files") }
                sleep(sessionSweepSeconds)
            }
        }
        Log.info("ireporter \(version) serving with \(configuration.workers) workers on "
                 + (configuration.listen.isEmpty ? "the inherited socket" : configuration.listen))

        while true {
            var received: Int32 = 0
            guard sigwait(&handled, &received) == 0 else { continue }
            switch received {
            case SIGTERM, SIGINT, SIGQUIT:
                Log.info("signal \(received): finishing requests in flight (up to \(drainSeconds) s)")
                let drained = pool.stop(deadlineSeconds: drainSeconds)
                if let path = socket.ownedPath { unlink(path) }
                if !configuration.pidFile.isEmpty { unlink(configuration.pidFile) }
                if !drained { Log.warning("some requests did not finish in time") }
                Log.info("stopped")
                return 0
            default:
                continue
            }
        }
    }

    private static func dropPrivileges(to user: String, socketPath: String?) throws(SystemError) {
        guard getuid() == 0 else { return }
        guard let entry = getpwnam(user) else { throw SystemError("unknown user \(user)", code: ENOENT) }
        let uid = entry.pointee.pw_uid, gid = entry.pointee.pw_gid
        if let socketPath { chown(socketPath, uid, gid) }
        guard initgroups(user, gid) == 0, setgid(gid) == 0, setuid(uid) == 0 else {
            throw SystemError("switch to user \(user)")
        }
    }

    private static func writePIDFile(_ path: String) {
        let text = Array("\(getpid())\n".utf8)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { Log.warning("cannot write pid file \(path)"); return }
        _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
