#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import CSystem

/// A fixed set of threads, each accepting FastCGI requests on the shared
/// listening socket with its own request slot, database connection and
/// buffers. libfcgi, Connector/C and gd all block, so plain threads are the
/// right tool; no lock around accept() is needed on Linux.
final class WorkerPool: @unchecked Sendable {
    /// Sent to idle workers to interrupt their accept() when stopping.
    static let wakeSignal = SIGALRM

    private let listenFD: Int32
    private let makeResponder: @Sendable () -> APIResponder
    private let stopping = Atomic<Bool>(false)
    private var threads: [pthread_t] = []

    init(listenFD: Int32, makeResponder: @escaping @Sendable () -> APIResponder) {
        self.listenFD = listenFD
        self.makeResponder = makeResponder
    }

    func start(workers: Int) {
        for _ in 0..<workers {
            threads.append(spawnThread { [self] in self.work() })
        }
    }

    private func work() {
        // Only workers take the wake signal; the main thread waits in sigwait.
        var wake = sigset_t()
        sigemptyset(&wake)
        sigaddset(&wake, Self.wakeSignal)
        pthread_sigmask(SIG_UNBLOCK, &wake, nil)

        let responder = makeResponder()
        let request = FastCGIRequest(listenFD: listenFD)
        while !stopping.load(ordering: .acquiring) {
            guard request.accept() else {
                if stopping.load(ordering: .acquiring) { break }
                continue
            }
            responder.respond(to: request)
            request.finish()
        }
    }

    /// Stops accepting; in-flight requests finish. Returns false if some
    /// worker was still busy when the deadline passed.
    func stop(deadlineSeconds: Int) -> Bool {
        stopping.store(true, ordering: .releasing)
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += deadlineSeconds
        for thread in threads {
            while true {
                pthread_kill(thread, Self.wakeSignal)
                var retry = timespec()
                clock_gettime(CLOCK_REALTIME, &retry)
                retry.tv_nsec += 100_000_000
                if retry.tv_nsec >= 1_000_000_000 { retry.tv_sec += 1; retry.tv_nsec -= 1_000_000_000 }
                if csystem_timed_join(thread, &retry) == 0 { break }
                if retry.tv_sec > deadline.tv_sec { return false }
            }
        }
        return true
    }
}

/// Starts a joinable thread running `body`.
func spawnThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    var thread = pthread_t()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setstacksize(&attributes, 8 << 20)
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let result = pthread_create(&thread, &attributes, { context in
        let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
        box.body()
        return nil
    }, box)
    pthread_attr_destroy(&attributes)
    precondition(result == 0, "pthread_create failed: \(result)")
    return thread
}
