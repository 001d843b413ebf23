#if canImport(Glibc)
import Glibc
#endif
import CHiredis

/// How a change of the stream reaches every host's kept answer
/// (`StreamAnswerFile`) when several hosts share Redis: the process that
/// bumps the generation publishes, on `ireporter:stream-changed:<db>`, the
/// name of a fresh list, and waits until every subscriber (each host's
/// `RedisStreamChangeListener`) has removed its host's file and pushed to
/// that list. So a change is answered only once no host's nginx can serve
/// the stream from before it (read-your-writes across hosts). A listener
/// that does not answer within half of `redis_timeout_ms` (its process
/// stopped, its host cut off) is not waited for further: logged; its host's
/// file ends within `stream_cache_ms`, and a listener that finds its
/// connection dead removes the file.
enum RedisStreamChanges {
    static let acknowledgementPrefix = "ireporter:stream-changed-ack:"
    /// An acknowledgement list nobody waits for any more is gone after this.
    static let acknowledgementLifetimeMillis = 10_000

    /// Channels are not per database: the database's number keeps two
    /// installations on one Redis apart.
    static func channel(_ settings: RedisSettings) -> String { "ireporter:stream-changed:\(settings.database)" }

    /// After the generation's INCR: every listener has removed its host's file when this returns.
    static func announce(over redis: RedisConnection) throws(RedisError) {
        let clock = MonotonicClock()
        let list = acknowledgementPrefix + SessionID.new()  // any fresh random name
        let listeners = try redis.command("PUBLISH", channel(redis.settings), list).integer()
        guard listeners > 0 else { return }
        let deadline = clock.now.millis + Int64(redis.settings.timeoutMillis / 2)
        for acknowledged in 0..<listeners {
            let remaining = deadline - clock.now.millis
            // BLPOP's timeout is in seconds, with decimals; 0 would wait forever.
            guard remaining > 0, try redis.command("BLPOP", list, secondsText(remaining)) != .null else {
                Metrics.count(.streamChangesUnconfirmed)
                Log.warning("stream_answer_file: \(listeners - acknowledged) of \(listeners) hosts did not confirm a change "
                            + "within \(redis.settings.timeoutMillis / 2) ms (their nginx may serve the stream from "
                            + "before it until its file ends)")
                return
            }
        }
    }

    /// Called by a listener once its host's file is removed.
    static func acknowledge(_ list: [UInt8], over redis: RedisConnection) throws(RedisError) {
        try redis.command(Array("RPUSH".utf8), list, Array("1".utf8))
        try redis.command(Array("PEXPIRE".utf8), list, Array(String(acknowledgementLifetimeMillis).utf8))
    }

    static func secondsText(_ millis: Int64) -> String {
        let thousandths = String(millis % 1000)
        return "\(millis / 1000)." + String(repeating: "0", count: 3 - thousandths.count) + thousandths
    }
}

/// A host's end of `RedisStreamChanges`, in its answer refresher: on a
/// connection of its own, subscribed to the changes of every host, it
/// removes the host's stream answer at each and acknowledges it. The host
/// keeps answers only while it is subscribed (`StreamAnswerFile.listen`):
/// when Redis cannot be reached, or a ping goes unanswered for
/// `redis_timeout_ms`, the file goes and the listener tries again each second.
final class RedisStreamChangeListener {
    private let subscription: RedisConnection
    private let acknowledgements: RedisConnection
    private let file: StreamAnswerFile
    private let clock: any TimeSource
    private(set) var isListening = false
    private var nextAttempt: Int64 = .min
    /// When the subscribed connection last answered anything, and when a ping was sent that is not answered yet.
    private var lastHeard: Int64 = 0
    private var pingSent: Int64?
    private var failureLogged = false

    static let retryMillis: Int64 = 1000
    /// An idle connection is pinged this often: a host cut off from Redis sees no error of its own.
    static let idlePingMillis: Int64 = 1000

    init(settings: RedisSettings, file: StreamAnswerFile, clock: any TimeSource = MonotonicClock()) {
        subscription = RedisConnection(settings: settings)
        acknowledgements = RedisConnection(settings: settings)
        self.file = file
        self.clock = clock
    }

    /// Handles the changes that come within `millis` (0: only those already
    /// here), subscribing first when it is not; waits out `millis` either way.
    func handleChanges(waitingUpTo millis: Int64) {
        let deadline = clock.now.millis + millis
        if !isListening {
            subscribe()
            if !isListening {
                Self.sleep(millis: deadline - clock.now.millis)
                return
            }
        }
        do {
            // Until the wait ends with nothing (its time is up, or a signal came).
            while let reply = try subscription.receive(waitingMillis: Int32(clamping: max(0, deadline - clock.now.millis))) {
                lastHeard = clock.now.millis
                pingSent = nil
                try handle(reply)
            }
            try keepAlive()
        } catch {
            lose(error)
        }
    }

    private func subscribe() {
        let now = clock.now.millis
        guard now >= nextAttempt else { return }
        do {
            try subscription.subscribe(RedisStreamChanges.channel(subscription.settings))
        } catch {
            nextAttempt = now + Self.retryMillis
            if !failureLogged {
                failureLogged = true
                Log.warning("stream_answer_file: cannot listen for the other hosts' changes: \(error) (no file kept until it can)")
            }
            return
        }
        isListening = true
        failureLogged = false
        lastHeard = now
        pingSent = nil
        // Changes made before the subscription were not heard: nothing kept from before.
        file.listen()
        Log.info("stream_answer_file: listening for the hosts' changes in Redis")
    }

    private func handle(_ reply: RedisReply) throws(RedisError) {
        guard case .array(let parts) = reply, parts.count == 3, parts[0] == .string(Array("message".utf8)),
              case .string(let list) = parts[2] else { return }  // a ping's answer
        file.remove()
        do {
            try RedisStreamChanges.acknowledge(list, over: acknowledgements)
        } catch {
            // The file is gone all the same; the host that changed the stream waits out its limit.
            Log.warning("stream_answer_file: cannot confirm a change: \(error)")
        }
    }

    private func keepAlive() throws(RedisError) {
        let now = clock.now.millis
        if let pingSent {
            if now - pingSent >= Int64(subscription.settings.timeoutMillis) {
                throw RedisError(code: .library(REDIS_ERR_IO), message: "no answer to a ping in \(now - pingSent) ms")
            }
        } else if now - lastHeard >= Self.idlePingMillis {
            try subscription.sendPing()
            pingSent = now
        }
    }

    private func lose(_ error: RedisError) {
        subscription.disconnect()
        isListening = false
        file.stopListening(as: getpid())
        nextAttempt = clock.now.millis + Self.retryMillis
        Log.warning("stream_answer_file: stopped listening for the hosts' changes: \(error) (no file kept until it listens again)")
    }

    private static func sleep(millis: Int64) {
        guard millis > 0 else { return }
        var wait = timespec(tv_sec: Int(millis / 1000), tv_nsec: Int(millis % 1000) * 1_000_000)
        nanosleep(&wait, nil)
    }
}
