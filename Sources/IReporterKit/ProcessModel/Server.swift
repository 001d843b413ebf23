#if canImport(Glibc)
import Glibc
#endif

/// The process: configuration, listening socket, privileges, then either
/// the supervisor with its worker processes or, as a CGI program, one request.
public enum Server {
    public static let version = "0.2.0"

    public static func run(_ configuration: Configuration,
                           reload: @escaping () throws(ConfigurationError) -> Configuration) -> Int32 {
        // Before FCGX_Init: libfcgi installs its own SIGTERM/SIGUSR1 handlers
        // where none is set, and they would merely set a flag.
        signal(SIGPIPE, SIG_IGN)
        let logFileExisted = access(configuration.logFile, F_OK) == 0
        if !configuration.logFile.isEmpty && !Log.redirectStarting(to: configuration.logFile) {
            Log.error("cannot open log_file \(configuration.logFile): \(String(cString: strerror(errno)))")
            return 1
        }
        guard FastCGIRequest.initializeLibrary() else {
            Log.error("FCGX_Init failed")
            return 1
        }
        DatabaseConnection.initializeLibrary()

        let socket: ListeningSocket
        do {
            if let systemd = ListeningSocket.fromSystemd() {
                // Taking its path over would unlink systemd's socket: requests would
                // no longer wait in it across a restart, nor start the service.
                if !configuration.listen.isEmpty {
                    Log.warning("listen = \(configuration.listen) is not used: systemd passed its socket (ireporter.socket); "
                                + "leave listen empty in this configuration")
                }
                socket = systemd
            } else if !configuration.listen.isEmpty {
                socket = try ListeningSocket.open(configuration.listen, mode: configuration.listenMode,
                                                  backlog: configuration.listenBacklog)
            } else if let spawned = ListeningSocket.fromStandardInput() {
                socket = spawned
            } else if CGIRequest.isCGI {
                Log.started() // a request's errors: the log file's (Apache's error log is the stderr given)
                return serveCGI(configuration)
            } else {
                Log.error("no listen address configured, and this process was given no listening socket "
                          + "(fd 0, systemd) and is not a CGI program: see --help")
                return 2
            }
            if let path = socket.ownedPath {
                try ListeningSocket.changeOwner(path, owner: configuration.listenOwner, group: configuration.listenGroup,
                                                user: configuration.user)
            }
            if !configuration.user.isEmpty {
                // A log file this start made (as root) is the user's: else its
                // SIGUSR1 reopen and a later start as the user itself would fail.
                if !configuration.logFile.isEmpty && !logFileExisted { giveToUser(STDERR_FILENO, configuration.user) }
                try dropPrivileges(to: configuration.user)
            }
        } catch {
            Log.error("\(error)")
            return 1
        }
        guard directoriesAreWritable(configuration), let shared = openSharedState(configuration) else { return 1 }
        Metrics.table = shared.metrics
        if !configuration.pidFile.isEmpty { PIDFile(path: configuration.pidFile).write() }
        Log.started()
        return Supervisor(configuration: configuration, socket: socket, shared: shared, reload: reload).run()
    }

    /// The installation's shared state (`shared_state_file`); nil, logged,
    /// when the file cannot be used at all.
    static func openSharedState(_ configuration: Configuration) -> SharedState? {
        do {
            return try SharedState.open(file: configuration.sharedStatePath)
        } catch {
            guard case .inUseByAnotherLayout = error else {
                Log.error("shared_state_file: \(error)")
                return nil
            }
            // An upgrade while processes of the old binary still run (mod_fcgid): theirs until they are gone.
            Log.warning("\(error): this process counts logins, uploads and hashes on its own until they are gone")
            return SharedState.privateToThisProcess()
        }
    }

    /// Apache mod_cgi: one request, answered on stdout, then exit.
    private static func serveCGI(_ configuration: Configuration) -> Int32 {
        guard directoriesAreWritable(configuration), let shared = openSharedState(configuration) else { return 1 }
        Metrics.table = shared.metrics
        let database = DatabaseConnection(settings: configuration.database)
        let request = CGIRequest()
        let responder = configuration.makeResponder(database: database, shared: shared, operatorPages: nil)
        RequestMetrics(table: shared.metrics, commands: responder.commandNames).record(responder.respond(to: request))
        database.disconnect()
        // The web server writes the whole body before it reads the answer:
        // exiting with body bytes unread would cost the client its answer.
        request.discardRemainingBody()
        // No supervisor sweeps for us: one request in a hundred does it (PHP's gc_probability).
        if Int.random(in: 0..<100) == 0 { configuration.sessionStore.sweep() }
        return 0
    }

    private static func directoriesAreWritable(_ configuration: Configuration) -> Bool {
        // The stream answer's, when the server keeps one (`warnings` says when not).
        let answerFolder = configuration.streamAnswerFile(configuration.apiPolicy).map {
            [("stream_answer_file's directory", $0.folder)]
        } ?? []
        for (name, directory) in [("upload_dir", configuration.uploadDirectory),
                                  ("session_dir", configuration.sessionDirectory)] + answerFolder
            where access(directory, W_OK | X_OK) != 0 {
            Log.error("\(name) \(directory) is not writable by uid \(geteuid()): \(String(cString: strerror(errno)))")
            return false
        }
        return true
    }

    static func dropPrivileges(to user: String) throws(SystemError) {
        guard getuid() == 0 else { return }
        guard let entry = getpwnam(user) else { throw SystemError("unknown user \(user)", code: ENOENT) }
        let uid = entry.pointee.pw_uid, gid = entry.pointee.pw_gid
        guard initgroups(user, gid) == 0, setgid(gid) == 0, setuid(uid) == 0 else {
            throw SystemError("switch to user \(user)")
        }
    }

    /// The open file `fd` (one this process made: the log file, on stderr)
    /// to `user` and their group, when running as root. Through the
    /// descriptor: its name may point elsewhere by now.
    private static func giveToUser(_ fd: Int32, _ user: String) {
        guard getuid() == 0, let entry = getpwnam(user) else { return }
        if fchown(fd, entry.pointee.pw_uid, entry.pointee.pw_gid) != 0 {
            Log.warning("cannot give the log file to \(user): \(String(cString: strerror(errno)))")
        }
    }
}
