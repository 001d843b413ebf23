#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// Makes the home feeds (`feed`) that the workers keep in their shared
/// table (`SharedAnswerTable`) again shortly before they expire, so that a
/// viewer polling their home is answered from an answer made less than
/// `stream_cache_ms` ago instead of waiting for its statements: a refresh
/// in a request was a few milliseconds of queries that the requests behind
/// it waited for too (issue 28, the home timeline's slowest requests).
/// Only answers a request asked for since they were made are made again, so
/// a viewer who stopped polling costs one more refresh, then none; the
/// rules of `AnswerCache` hold (each answer only for the stream generation
/// it was made under). Likewise the plain stream's answer in the host's
/// `stream_answer_file`, while nginx reads it.
final class AnswerRefresher {
    private let table: SharedAnswerTable
    private let counters: any SharedCounters
    private let feed: FeedCommand
    /// The full stream's answer for the host's nginx, made again ahead of its end while nginx reads it.
    private let streamAnswer: StreamAnswerFile?
    private let stream: StreamCommand
    private let maxAge: Int64
    private let clock: any TimeSource
    private var lastFailureLogged: Int64?
    /// Run between two answers of a round: what must not wait for a whole round (the other hosts' changes).
    var betweenAnswers: () -> Void = {}

    /// How long before its end an answer is made again: more than a round
    /// of refreshes takes.
    var leadMillis: Int64 { maxAge / 8 }
    /// Between two looks at the table.
    var periodMillis: Int64 { max(maxAge / 32, 10) }

    /// Nil without a shared table or with the answer caches off (`stream_cache_ms = 0`, replicas).
    init?(services: AppServices) {
        guard let table = services.sharedAnswers, services.policy.streamCacheMillis > 0 else { return nil }
        self.table = table
        counters = services.counters
        feed = FeedCommand(services)
        streamAnswer = services.streamAnswer
        stream = StreamCommand(services)
        maxAge = Int64(services.policy.streamCacheMillis)
        clock = services.clock
    }

    /// Makes again the answers due now; returns how many. A failure (the
    /// database gone) ends the round: the requests make their own answers.
    @discardableResult
    func refreshDue() -> Int {
        var made = 0
        if let streamAnswer, streamAnswer.isDue(lead: leadMillis) {
            do {
                try stream.remakeAnswerFile()
                made += 1
            } catch {
                noteFailure(error)
                return made
            }
        }
        guard let generation = try? counters.streamGeneration else { return made }
        let names = table.due(prefix: FeedCommand.Question.sharedKeyPrefix, generation: generation, now: clock.now.millis,
                              maxAge: maxAge, lead: leadMillis)
        for name in names {
            betweenAnswers()
            do {
                try feed.remake(named: name)
                made += 1
            } catch {
                noteFailure(error)
                break
            }
        }
        return made
    }

    /// Logged once a minute at most: the workers log what their requests meet.
    private func noteFailure(_ error: any Error) {
        let now = clock.now.millis
        if lastFailureLogged.map({ now - $0 >= 60_000 }) ?? true {
            lastFailureLogged = now
            Log.warning("answer refresher: \(error)")
        }
    }
}

/// The `AnswerRefresher`'s process, beside the workers (the supervisor
/// starts it, replaces it when it dies or the configuration is reloaded,
/// and stops it with them): named `answer-refresh` in ps, on its own
/// database connection (never beside replicas: the answer caches are off).
enum RefresherProcess {
    static let name = "answer-refresh"

    static func run(configuration: Configuration, shared: SharedState) -> Never {
        csystem_set_process_name(name)
        _ = WorkerProcess.noteSignals()
        let database = DatabaseConnection(settings: configuration.database)
        let services = configuration.services(database: database, shared: shared, photoFiles: configuration.photoFileStore())
        guard let refresher = AnswerRefresher(services: services) else { exit(0) }
        // Several hosts: the stream answer file is kept only while this listens for the others' changes.
        let listener = configuration.redisSettings.flatMap { settings in
            services.streamAnswer.map { RedisStreamChangeListener(settings: settings, file: $0) }
        }
        if let listener { refresher.betweenAnswers = { listener.handleChanges(waitingUpTo: 0) } }
        let period = timespec(tv_sec: Int(refresher.periodMillis / 1000), tv_nsec: Int(refresher.periodMillis % 1000) * 1_000_000)
        while !WorkerProcess.stopSignals.contains(where: { csystem_signal_seen($0) != 0 }) {
            if csystem_take_signal(SIGUSR1) != 0, !configuration.logFile.isEmpty { Log.reopen(configuration.logFile) }
            refresher.refreshDue()
            // A stop signal ends the wait, as it ends the listener's.
            if let listener {
                listener.handleChanges(waitingUpTo: refresher.periodMillis)
            } else {
                var wait = period
                nanosleep(&wait, nil)
            }
        }
        database.disconnect()
        exit(0)
    }
}
