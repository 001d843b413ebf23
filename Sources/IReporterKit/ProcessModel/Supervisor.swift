#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The master process (php-fpm's model, `pm = static`): keeps `workers`
/// worker processes running on the listening socket, replaces one that
/// crashes, exits or overstays `request_timeout`, and handles the signals:
///
/// - SIGTERM, SIGINT, SIGQUIT: stop accepting, let requests in flight finish
///   (up to `shutdown_timeout`), exit;
/// - SIGUSR2: reload the configuration and replace every worker, new ones
///   first, so no request is refused;
/// - SIGUSR1: reopen the log files.
final class Supervisor {
    private var configuration: Configuration
    private let reload: () throws(ConfigurationError) -> Configuration
    private let socket: ListeningSocket
    private let scoreboard: Scoreboard
    private let shared: SharedState
    private var generation: Int64 = 1
    private var stopping = false
    private var stopDeadline: Int64 = 0
    private var lastSweep: Int64 = 0
    private var recentCrashes: [Int64] = []
    /// No worker or refresher is started before this (`clock` millis): a
    /// run of crashes must not become a fork loop.
    private var respawnNotBefore: Int64 = 0
    /// Workers the watchdog killed, until reaped: not crashes.
    private var timedOutWorkers: Set<Int32> = []
    /// A fork failed and none has succeeded since (logged once).
    private var forkFailing = false
    /// The `RefresherProcess` (0: none running).
    private var refresher: pid_t = 0
    /// The process sweeping the upload folder (0: none running): stopped
    /// and waited for with the workers, so that nothing outlives the server.
    private var sweeper: pid_t = 0
    /// The refresher and the sweeper, those running: stopped with the workers.
    private var helpers: [pid_t] { [refresher, sweeper].filter { $0 != 0 } }
    /// Deadlines, timeouts and the sweeps' interval; the workers time their
    /// requests on it too (the scoreboard's times are compared across
    /// processes: one host's monotonic clock).
    private let clock: any TimeSource
    /// The status page's start time, and the installation's sweep (`SweepClock`).
    private let wallClock: any WallClock

    init(configuration: Configuration, socket: ListeningSocket, shared: SharedState,
         clock: any TimeSource = MonotonicClock(), wallClock: any WallClock = RealtimeClock(),
         reload: @escaping () throws(ConfigurationError) -> Configuration) {
        self.clock = clock
        self.wallClock = wallClock
        scoreboard = Scoreboard(wallClock: wallClock)
        self.configuration = configuration
        self.socket = socket
        self.shared = shared
        self.reload = reload
    }

    /// Runs until stopped; returns the exit status.
    func run() -> Int32 {
        var handled = sigset_t()
        sigemptyset(&handled)
        for signal in [SIGTERM, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGHUP, SIGCHLD] { sigaddset(&handled, signal) }
        pthread_sigmask(SIG_BLOCK, &handled, nil)

        removeStreamAnswer()
        topUp()
        Log.info("ireporter \(Server.version) serving with \(configuration.workers) worker processes on \(listenDescription)")

        while true {
            var timeout = timespec(tv_sec: stopping ? 0 : 1, tv_nsec: stopping ? 100_000_000 : 0)
            let received = sigtimedwait(&handled, nil, &timeout)
            if received > 0 { handle(signal: received) }
            reapWorkers()
            if stopping {
                let remaining = scoreboard.occupied
                if remaining.isEmpty && helpers.isEmpty { break }
                if clock.now.millis > stopDeadline {
                    Log.warning("\(remaining.count) worker(s) still busy after \(configuration.shutdownTimeout) s: killing them")
                    for (_, slot) in remaining { kill(slot.pid, SIGKILL) }
                    for helper in helpers { kill(helper, SIGKILL) }
                } else {
                    // Again and again: a worker between two accept() calls may have missed it.
                    for (_, slot) in remaining { kill(slot.pid, SIGTERM) }
                    for helper in helpers { kill(helper, SIGTERM) }
                }
            } else {
                topUp()
                enforceRequestTimeout()
                sweepPeriodically()
            }
        }
        socket.removeOwnedPath()
        if !configuration.pidFile.isEmpty { PIDFile(path: configuration.pidFile).remove() }
        removeStreamAnswer()
        Log.info("stopped")
        return 0
    }

    /// A stream answer from before a start, a reload (its data or rules may
    /// differ) or after a stop is not nginx's to serve; the workers make it
    /// again. Nor one kept while the refresher that listens for the other
    /// hosts' changes is gone: its successor listens anew.
    private func removeStreamAnswer() {
        guard !configuration.streamAnswerFile.isEmpty else { return }
        StreamAnswerFile(path: configuration.streamAnswerFile, maxAgeMillis: 0).stopListening()
    }

    private var listenDescription: String {
        configuration.listen.isEmpty ? "the inherited socket" : configuration.listen
    }

    private func handle(signal: Int32) {
        switch signal {
        case SIGTERM, SIGINT, SIGQUIT:
            guard !stopping else { return }
            Log.info("signal \(signal): finishing requests in flight (up to \(configuration.shutdownTimeout) s)")
            stopping = true
            stopDeadline = clock.now.millis + Int64(configuration.shutdownTimeout) * 1000
            // No new connections from here on; the workers serve what is
            // already queued on the socket before they leave.
            socket.removeOwnedPath()
            for (_, slot) in scoreboard.occupied { kill(slot.pid, SIGTERM) }
            for helper in helpers { kill(helper, SIGTERM) }
        case SIGUSR2:
            // Stopping: new workers would only be stopped again, and the old ones lose their drain.
            guard !stopping else { return }
            reloadWorkers()
        case SIGUSR1:
            let reopened = configuration.logFile.isEmpty || Log.reopen(configuration.logFile)
            for (_, slot) in scoreboard.occupied { kill(slot.pid, SIGUSR1) }
            if refresher != 0 { kill(refresher, SIGUSR1) }
            if reopened { Log.info("log files reopened") }
        case SIGHUP:
            // Blocked so that a closed terminal does not end the server; an
            // operator who sent it for nginx's reload is told what does that.
            Log.warning("SIGHUP ignored: SIGUSR2 reloads the configuration, SIGUSR1 reopens the logs")
        default:
            break
        }
    }

    /// New configuration, new workers; the old ones finish what they are
    /// doing and leave. The listening socket stays (changing `listen` needs
    /// a restart).
    private func reloadWorkers() {
        do {
            var fresh = try reload()
            if fresh.listen != configuration.listen {
                Log.warning("listen changed: it takes effect at the next restart, not on reload")
                fresh.listen = configuration.listen
            }
            if fresh.pidFile != configuration.pidFile {
                Log.warning("pid_file changed: it takes effect at the next restart, not on reload")
                fresh.pidFile = configuration.pidFile
            }
            if fresh.sharedStatePath != configuration.sharedStatePath {
                Log.warning("shared_state_file changed: it takes effect at the next restart, not on reload")
            }
            removeStreamAnswer()
            configuration = fresh
            removeStreamAnswer()
            Log.configure(level: fresh.logLevel, format: fresh.logFormat)
        } catch {
            // One line, as every other of the log (the problems are one a line in `check`).
            Log.error("reload refused, keeping the running configuration: "
                      + String(describing: error).split(separator: "\n").joined(separator: "; "))
            return
        }
        let old = scoreboard.occupied
        generation += 1
        // The old refresher finishes its refresh and leaves unwatched.
        if refresher != 0 { kill(refresher, SIGTERM) }
        refresher = 0
        topUp()
        for (_, slot) in old { kill(slot.pid, SIGQUIT) }
        Log.info("reloaded: \(configuration.workers) new worker processes, \(old.count) old ones finishing")
    }

    /// Starts the workers the current generation lacks (one that died, one
    /// a failed fork or a full scoreboard never started: tried again each
    /// second) and the refresher, unless a run of crashes holds them back.
    private func topUp() {
        guard !stopping, clock.now.millis >= respawnNotBefore else { return }
        let running = scoreboard.occupied.count { $0.1.generation == generation }
        for _ in 0..<max(configuration.workers - running, 0) {
            guard spawnWorker() else { break }
        }
        if refresher == 0 { spawnRefresher() }
    }

    /// Whether the worker was started; a failure is logged once until one is.
    private func spawnWorker() -> Bool {
        guard let slot = scoreboard.freeSlot() else {
            noteForkFailure("no free worker slot (at most \(Scoreboard.maxSlots))")
            return false
        }
        let pages = OperatorPages(pingPath: configuration.pingPath, statusPath: configuration.statusPath,
                                  readyPath: configuration.readyPath,
                                  scoreboard: scoreboard, metrics: shared.metrics, listenDescription: listenDescription,
                                  listenFD: socket.fd, uploadDirectory: configuration.uploadDirectory, clock: clock,
                                  wallClock: wallClock)
        let supervisor = getpid()
        scoreboard.reserve(slot, generation: generation)
        let pid = fork()
        if pid == 0 {
            // A supervisor killed outright (OOM killer, kill -9) takes its
            // workers along: each finishes the request in hand and leaves
            // the queue to the next server (SIGQUIT: no drain), which
            // systemd's Restart=, the socket unit or `make up` starts at once.
            if csystem_die_with_parent(SIGQUIT, supervisor) != 0 { _exit(0) }
            WorkerProcess.run(slot: slot, listenFD: socket.fd, configuration: configuration, scoreboard: scoreboard,
                              shared: shared, operatorPages: pages, clock: clock)
        }
        guard pid > 0 else {
            noteForkFailure("fork failed: \(String(cString: strerror(errno)))")
            scoreboard.release(slot)
            return false
        }
        scoreboard.assign(slot, pid: pid)
        if forkFailing {
            forkFailing = false
            Log.info("worker processes start again")
        }
        return true
    }

    private func noteForkFailure(_ message: String) {
        guard !forkFailing else { return }
        forkFailing = true
        Log.error("\(message): the workers missing are started as soon as they can be (tried each second)")
    }

    /// The `RefresherProcess`, when the workers keep answers for each other
    /// (`stream_cache_ms`, no replicas).
    private func spawnRefresher() {
        guard AppServices.Policy(configuration).streamCacheMillis > 0 else { return }
        let configuration = configuration
        let supervisor = getpid()
        let pid = fork()
        if pid == 0 {
            if csystem_die_with_parent(SIGTERM, supervisor) != 0 { _exit(0) }
            RefresherProcess.run(configuration: configuration, shared: shared)
        }
        guard pid > 0 else {
            noteForkFailure("fork failed: \(String(cString: strerror(errno)))")
            return
        }
        refresher = pid
    }

    private func reapWorkers() {
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            guard pid > 0 else { return }
            if pid == sweeper {
                sweeper = 0
                continue
            }
            if pid == refresher {
                refresher = 0
                removeStreamAnswer()
                guard !stopping else { continue }
                if status != 0 {
                    Log.error("the answer refresher \(pid) " + (status & 0x7F != 0 ? "was killed by signal \(status & 0x7F)"
                                                                                 : "exited with status \((status >> 8) & 0xFF)"))
                }
                noteCrash()  // started again by `topUp`
                continue
            }
            guard let index = scoreboard.index(of: pid) else { continue }
            let slot = scoreboard.slot(index)
            let request = scoreboard.request(index)
            scoreboard.release(index)
            let signalled = status & 0x7F
            let exitCode = (status >> 8) & 0xFF
            // The watchdog's kill is counted and told as a timeout, not a crash.
            let timedOut = timedOutWorkers.remove(pid) != nil
            let abnormal = (signalled != 0 || exitCode != 0) && !timedOut
            if abnormal {
                scoreboard.countCrash()
                Log.error("worker \(pid) " + (signalled != 0 ? "was killed by signal \(signalled)" : "exited with status \(exitCode)")
                          + (slot.state == .busy ? " while serving \(request.description)" : ""))
            }
            // Replaced by `topUp`, at once unless crashes hold it back.
            if abnormal && !stopping && slot.generation == generation { noteCrash() }
        }
    }

    /// A worker that dies at once (a bad configuration, the database's
    /// library failing) must not become a fork loop: past 10 crashes in 10 s
    /// the next start waits half a second, while the supervisor goes on
    /// watching signals and timeouts (it slept through them).
    private func noteCrash() {
        let now = clock.now.millis
        recentCrashes = recentCrashes.filter { now - $0 < 10_000 } + [now]
        if recentCrashes.count > 10 { respawnNotBefore = now + 500 }
    }

    private func enforceRequestTimeout() {
        guard configuration.requestTimeout > 0 else { return }
        let now = clock.now.millis
        for (index, slot) in scoreboard.occupied where (slot.state == .busy || slot.state == .accepting)
            && !timedOutWorkers.contains(slot.pid) && now - slot.requestStartedMillis > Int64(configuration.requestTimeout) * 1000 {
            let request = slot.state == .busy ? scoreboard.request(index).description : "reading its parameters"
            Log.error("worker \(slot.pid): request running for more than \(configuration.requestTimeout) s, killing it: \(request)")
            scoreboard.countTimeout()
            kill(slot.pid, SIGKILL)
            timedOutWorkers.insert(slot.pid)
        }
    }

    /// The Mastodon API's apps that never signed anyone in, and its tokens
    /// that ended (`MariaDBOAuthStore.sweep`).
    private func sweepOAuth(_ database: DatabaseConnection) {
        do {
            let swept = try MariaDBOAuthStore(database: database).sweep(now: wallClock.unixSeconds)
            if swept.apps + swept.tokens > 0 {
                Log.info("removed \(swept.apps) OAuth apps that signed no one in and \(swept.tokens) tokens that ended")
            }
        } catch where error.code == .noSuchTable {
            // Before migration 010 there is no OAuth.
        } catch where error.code == .keyDoesNotExist {
            Log.info("OAuth apps and tokens are kept until migration 014 is applied (ireporter migrate)")
        } catch {
            Log.warning("sweep of the OAuth tables skipped: \(error)")
        }
    }

    /// The sweep's name in `ps`: told apart from the workers.
    static let sweepProcessName = "upload-sweep"

    /// Expired sessions, then what a crash or a failing disk left in the
    /// upload folder, cleared by a separate process so that serving goes on. Only files older than
    /// any request can be are touched; files without a row are set aside
    /// (`.removed/`), rows without a file only reported (`ireporter repair
    /// --yes` sets them aside); nothing at all when it looks like a wrong
    /// path (see `PhotoRepair`). The Mastodon API's media never posted
    /// go first (`PendingMediaSweep`), then its OAuth apps and tokens
    /// (`sweepOAuth`), on one connection.
    private func sweepUploadsInBackground() {
        let graceSeconds = (configuration.requestTimeout > 0 ? configuration.requestTimeout : 3600) + 60
        let configuration = configuration
        let supervisor = getpid()
        let pid = fork()
        guard pid == 0 else {
            if pid > 0 { sweeper = pid } else { Log.warning("sweep of the upload folder skipped: fork failed: \(String(cString: strerror(errno)))") }
            return
        }
        if csystem_die_with_parent(SIGTERM, supervisor) != 0 { _exit(0) }
        csystem_set_process_name(Self.sweepProcessName)
        // The supervisor holds SIGTERM back for sigtimedwait: this process must not.
        var terminate = sigset_t()
        sigemptyset(&terminate)
        sigaddset(&terminate, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &terminate, nil)
        // Sessions first: a folder shared with PHP may hold hundreds of
        // thousands of files, listed here rather than in the supervisor.
        let removedSessions = configuration.sessionStore.sweep()
        if removedSessions > 0 { Log.info("removed \(removedSessions) expired session files") }
        // Then a few queries, where the folder's listing may take minutes.
        let database = DatabaseConnection(settings: configuration.database)
        do {
            let media = MariaDBMediaStore(database: database)
            let swept = try PendingMediaSweep(media: media, spoolDirectory: configuration.uploadDirectory, now: wallClock.unixSeconds).run()
            if swept.media + swept.files > 0 {
                Log.info("removed \(swept.media) media never posted and \(swept.files) media files without a row")
            }
        } catch let error as DatabaseError where error.code == .noSuchTable {
            // Before migration 011 there are no media.
        } catch {
            Log.warning("sweep of the media never posted skipped: \(error)")
        }
        sweepOAuth(database)
        let repair = configuration.uploadRepair()
        do {
            let report = try repair.run(graceSeconds: graceSeconds, actions: PhotoRepair.Actions(setAsideFiles: true), progress: nil)
            if let refusal = report.refusal {
                Log.error("sweep of \(configuration.uploadDirectory): nothing changed: \(refusal)")
            } else if !report.hasNoDebris {
                Log.warning("sweep of \(configuration.uploadDirectory): \(report.summary)")
            }
            if report.applied.contains(.files), !report.filesWithoutRow.isEmpty {
                // Named: "my photo vanished" is answered from the log.
                Log.warning("moved to \(PhotoRepair.removedFolder)/ (no row names them): "
                            + report.filesWithoutRow.prefix(50).joined(separator: ", ")
                            + (report.filesWithoutRow.count > 50 ? ", and \(report.filesWithoutRow.count - 50) more" : ""))
            }
            if report.orphanReactions > 0 && report.refusal == nil {
                Log.warning("sweep of \(configuration.uploadDirectory): \(report.orphanReactions) \(PhotoRepair.keptReactionsAdvice)")
            }
            if !report.rowsWithoutPhoto.isEmpty && report.refusal == nil {
                Log.warning("rows without a photo file: IdPhoto \(report.rowsWithoutPhoto.prefix(20).map(String.init).joined(separator: ", ")); "
                            + "`ireporter repair` shows what it would do, `ireporter repair --yes` moves them to the table photos_removed")
            }
        } catch {
            Log.warning("sweep of the upload folder skipped: \(error)")
        }
        _exit(0)
    }

    /// At start and every 10 minutes: the sessions and the upload folder,
    /// in a process of their own, unless a process of the installation
    /// began its sweep less than 10 minutes ago (`SweepClock`).
    private func sweepPeriodically() {
        let now = clock.now.millis
        guard now - lastSweep > 600_000 || lastSweep == 0 else { return }
        lastSweep = now
        // One sweep at a time: a folder of millions may take longer than the interval.
        if sweeper == 0, shared.sweepClock.claim(now: wallClock.unixSeconds, intervalSeconds: 600) { sweepUploadsInBackground() }
    }
}
