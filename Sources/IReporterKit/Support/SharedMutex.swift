#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex in memory shared by processes (forked workers, or every
/// process mapping one file): process-shared, and robust, so that a process
/// killed while holding it (watchdog, OOM killer) does not wedge the others;
/// the next locker takes it over.
struct SharedMutex {
    /// Bytes to reserve per mutex: a cache line each, so neighbours do not
    /// share one.
    static let stride = (MemoryLayout<pthread_mutex_t>.size + 63) / 64 * 64

    private let pointer: UnsafeMutablePointer<pthread_mutex_t>

    /// Initialises a mutex at `memory` (at least `stride` bytes, shared).
    init(initializingAt memory: UnsafeMutableRawPointer) {
        self.init(at: memory)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_setpshared(&attributes, Int32(PTHREAD_PROCESS_SHARED))
        pthread_mutexattr_setrobust(&attributes, Int32(PTHREAD_MUTEX_ROBUST))
        pthread_mutex_init(pointer, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    /// The mutex another process initialised at `memory`.
    init(at memory: UnsafeMutableRawPointer) {
        pointer = memory.bindMemory(to: pthread_mutex_t.self, capacity: 1)
    }

    func lock() {
        if pthread_mutex_lock(pointer) == EOWNERDEAD { pthread_mutex_consistent(pointer) }
    }

    /// Takes the mutex if it is free (or its holder died); never waits.
    func tryLock() -> Bool {
        switch pthread_mutex_trylock(pointer) {
        case 0: return true
        case EOWNERDEAD: pthread_mutex_consistent(pointer); return true
        default: return false
        }
    }

    func unlock() { pthread_mutex_unlock(pointer) }
}

extension [SharedMutex] {
    /// Runs `body` holding a free one of the first `limit` mutexes; nil,
    /// without running it, when none is free (never waits).
    func withFreeOneHeld<R>(limit: Int, _ body: () -> R) -> R? {
        let count = Swift.min(Swift.max(limit, 1), self.count)
        guard let free = (0..<count).first(where: { self[$0].tryLock() }) else { return nil }
        defer { self[free].unlock() }
        return body()
    }

    /// Runs `body` holding one of the first `limit` mutexes (a gate's slots):
    /// a free one if there is any, else waits for this process's own, so
    /// that at most `limit` processes run `body` at once.
    func withOneHeld<R>(limit: Int, _ body: () -> R) -> R {
        let count = Swift.min(Swift.max(limit, 1), self.count)
        let preferred = Int(getpid()) % count
        let order = (0..<count).lazy.map { (preferred + $0) % count }
        let held: SharedMutex
        if let free = order.first(where: { self[$0].tryLock() }) {
            held = self[free]
        } else {
            held = self[preferred]
            held.lock()
        }
        defer { held.unlock() }
        return body()
    }
}
