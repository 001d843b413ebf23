#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// When a process of the installation last began the sweep of the upload
/// folder, in the shared state: mod_fcgid starts processes all day long,
/// each a server of its own, and a folder of a million photos should be
/// swept once an interval, not once a process.
final class SweepClock: @unchecked Sendable {
    static let bytes = 64

    private let lastSweep: UnsafeMutablePointer<CLongLong>

    /// The clock at `memory` (`bytes`, zeroed when new: never swept).
    init(memory: UnsafeMutableRawPointer) {
        lastSweep = memory.bindMemory(to: CLongLong.self, capacity: 1)
    }

    /// True, once per `intervalSeconds` for all the processes together: the
    /// caller sweeps. (Wall-clock seconds, the processes' common time; a
    /// clock set back does not stop the sweeps.)
    func claim(now: Int64, intervalSeconds: Int64) -> Bool {
        let last = Int64(csystem_load(lastSweep))
        guard now - last >= intervalSeconds || last > now else { return false }
        return csystem_compare_exchange(lastSweep, CLongLong(last), CLongLong(now)) != 0
    }
}
