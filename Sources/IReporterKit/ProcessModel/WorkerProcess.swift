#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// One worker process: accepts FastCGI requests one at a time on the shared
/// listening socket, with its own database connection, until it is told to
/// stop (SIGTERM/SIGQUIT/SIGINT, after the request in hand) or has served
/// `max_requests`. One request per process means a crash or a kill by the
/// watchdog costs exactly that one request.
enum WorkerProcess {
    static let stopSignals = [SIGTERM, SIGINT, SIGQUIT]

    static func run(slot: Int, listenFD: Int32, configuration: Configuration, scoreboard: Scoreboard,
                    shared: SharedState, operatorPages: OperatorPages, clock: any TimeSource) -> Never {
        var requestSignals = noteSignals()

        // Big blocks (Argon2's 19 MiB, a progressive photo's coefficients)
        // straight from mmap and back to the system when freed: glibc would
        // otherwise raise the threshold after the first one and keep them in
        // the heap for good. Not the blocks every upload takes and frees
        // (libjpeg's 256 KiB input buffer, the resampler's rows): from mmap,
        // each cost page faults, zeroing and munmap, 8 % of a 640x640
        // upload's worker CPU (bench/profile-changes.md, issue 14).
        csystem_mmap_large_blocks(1 << 20)
        // Setting the mmap threshold also fixes glibc's trim threshold at
        // 128 KiB: the heap's top was given back (brk) after every upload
        // and taken again, with its page faults, at the next (issue 14).
        csystem_keep_free_heap(4 << 20)
        let accessLog = AccessLog(configuration: configuration)
        Log.currentRequest = { scoreboard.slot(slot).state == .busy ? scoreboard.request(slot).description : nil }
        // On a Galera cluster, worker N starts at node N: the workers spread.
        let database = DatabaseConnection(settings: configuration.database, firstNode: slot)
        operatorPages.readiness = Readiness(probes: Readiness.probes(configuration, database: database), clock: clock)
        let responder = configuration.makeResponder(database: database, shared: shared, operatorPages: operatorPages)
        let metrics = RequestMetrics(table: shared.metrics, commands: responder.commandNames)
        responder.requestBegins = { record in
            scoreboard.noteRequest(slot, requestID: record.requestID, client: record.client, method: record.method, uri: record.uri)
        }
        // Connections nginx keeps open (`fastcgi_keep_conn on` with an
        // upstream `keepalive`) stay with the worker that accepted them; it
        // serves them and the listening socket side by side, one request at
        // a time, whichever poll() finds ready. Taking new connections
        // whenever it is between two requests is what keeps a connection
        // nginx opened from waiting in the backlog while every worker holds
        // kept ones. Only nginx closes a kept connection (the worker cannot
        // close one without racing a request nginx may be writing to it,
        // which nginx answers with a 502 for a POST): a worker that stops
        // accepting on a reload or at max_requests serves its kept
        // connections until nginx has closed them (the upstream's
        // keepalive_timeout and keepalive_time bound that), then leaves.
        var acceptor = FastCGIRequest(listenFD: listenFD)
        var kept: [FastCGIRequest] = []
        var served = 0
        // A stopping supervisor has removed its socket's path: what is still
        // queued is served. (A socket someone else owns keeps its backlog for
        // the next server: systemd, spawn-fcgi.)
        let drainOnStop = configuration.listen.hasPrefix("/")
        // Idle workers wait in poll(), where a stop signal wakes them; the
        // signals are blocked from accept() until the answer is out. libfcgi's
        // accept also reads the request's parameters, and takes a read
        // interrupted there for their end: the request went on without its
        // CONTENT_LENGTH (a "Malformed request" seen at a reload under load).
        // Non-blocking accept: when another worker took the connection first,
        // back to poll() instead of waiting in accept() with signals blocked.
        _ = fcntl(listenFD, F_SETFL, fcntl(listenFD, F_GETFL) | O_NONBLOCK)

        /// Accepts the next request on `request` (a new connection or a kept
        /// one) and answers it; false when there was none.
        func serve(_ request: FastCGIRequest) -> Bool {
            pthread_sigmask(SIG_BLOCK, &requestSignals, nil)
            defer { pthread_sigmask(SIG_UNBLOCK, &requestSignals, nil) }
            // Timed from accept on: the watchdog also ends a client that
            // stalls while sending the parameters. Counted as a request only
            // once accepted: the other workers woken for the same connection
            // find none (the status page's figures count real requests).
            let started = clock.now.millis
            scoreboard.markAccepting(slot, now: started)
            // Our own watchdog, a little later than the supervisor's: it still
            // holds when the supervisor is gone (SIGALRM's default ends us).
            if configuration.requestTimeout > 0 { alarm(UInt32(configuration.requestTimeout) + 5) }
            switch request.accept(allowing: configuration.listenAllowedClients) {
            case .request: break
            case .none:
                alarm(0)
                return false
            case .refused(let peer):
                Log.warning("closed a connection from \(peer), not in listen_allowed_clients")
                alarm(0)
                return true
            }
            scoreboard.markBusy(slot, startedMillis: started)
            let record = responder.respond(to: request)
            // Counted before the answer is complete: whoever reads the metrics
            // after it (the client itself) sees this request in them.
            metrics.record(record)
            scoreboard.setPreparedStatements(slot, database.preparedStatementCount)
            request.finish()
            alarm(0)
            scoreboard.finishRequest(slot, durationMillis: clock.now.millis - started)
            accessLog.write(record)
            if configuration.slowRequestMillis > 0 && record.totalMicros >= Int64(configuration.slowRequestMillis) * 1000 {
                scoreboard.countSlowRequest()
                Log.warning("slow request: " + AccessLog.describe(record))
            }
            served += 1
            return true
        }

        while true {
            if csystem_take_signal(SIGUSR1) != 0 {
                if !configuration.logFile.isEmpty { Log.reopen(configuration.logFile) }
                accessLog.reopen()
            }
            let recycled = configuration.maxRequests > 0 && served >= configuration.maxRequests
            // Stopping (not a reload's or a dead supervisor's SIGQUIT): the
            // kept connections' requests already sent are served, then the
            // worker leaves without waiting for nginx to close them.
            let stopping = stopRequested && !retiring
            let accepting: Bool
            if stopRequested {
                accepting = drainOnStop && !retiring && hasQueuedConnection(listenFD)
            } else {
                accepting = !recycled
            }
            if !accepting && kept.isEmpty { break }
            scoreboard.markIdle(slot)
            var descriptors = kept.map { pollfd(fd: $0.connectionFD, events: Int16(POLLIN), revents: 0) }
            if accepting { descriptors.append(pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)) }
            // A signal (stop, reopen) wakes the wait: the loop looks again.
            let ready = Glibc.poll(&descriptors, nfds_t(descriptors.count), stopping ? 0 : -1)
            if ready == 0 && stopping { break }
            guard ready > 0 else { continue }
            let newConnection = accepting && descriptors[kept.count].revents != 0
            var closed = false
            for (index, connection) in kept.enumerated() where descriptors[index].revents != 0 {
                // Readable with no request: nginx closed it (libfcgi has too).
                if !serve(connection) || !connection.isKept { closed = true }
            }
            if closed { kept.removeAll { !$0.isKept } }
            if newConnection {
                if serve(acceptor) && acceptor.isKept {
                    acceptor.keepConnectionOnly()
                    kept.append(acceptor)
                    acceptor = FastCGIRequest(listenFD: listenFD)
                }
            }
        }
        database.disconnect()
        exit(0)
    }

    /// What a process the supervisor forked does with signals: the stop
    /// signals and SIGUSR1 (reopen the logs) are noted for it to act on
    /// between two steps, and unblocked (the supervisor blocks them for its
    /// sigtimedwait); the supervisor's own (SIGUSR2, SIGHUP) are ignored.
    /// Returns the noted ones.
    static func noteSignals() -> sigset_t {
        for signal in stopSignals + [SIGUSR1] { csystem_install_flag_handler(signal) }
        signal(SIGUSR2, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        var noted = sigset_t()
        sigemptyset(&noted)
        for signal in stopSignals + [SIGUSR1] { sigaddset(&noted, signal) }
        pthread_sigmask(SIG_UNBLOCK, &noted, nil)
        return noted
    }

    private static func hasQueuedConnection(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return Glibc.poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLIN) != 0
    }

    /// SIGQUIT: replaced by a new worker (reload: the socket stays open, so
    /// there is no backlog to drain), or the supervisor died (the queue is
    /// for the server that takes its place).
    private static var retiring: Bool { csystem_signal_seen(SIGQUIT) != 0 }

    private static var stopRequested: Bool {
        stopSignals.contains { csystem_signal_seen($0) != 0 }
    }
}
