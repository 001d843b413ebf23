#if canImport(Glibc)
import Glibc
#endif

/// The supervisor's `pid_file`: written once it listens, removed when it
/// stops, but only while it still names this process. A second server of
/// the same installation (started on another socket for an upgrade, then
/// the old one stopped) has written its own pid there by then, which
/// reloads and log rotation (`kill -USR1 $(cat …)`) go on reading.
struct PIDFile {
    let path: String

    func write(pid: pid_t = getpid()) {
        let text = Array("\(pid)\n".utf8)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { Log.warning("cannot write pid file \(path)"); return }
        _ = text.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Removes the file if it names `pid`; leaves another process's.
    func remove(naming pid: pid_t = getpid()) {
        guard let text = readFile(path),
              pid_t(String(decoding: text.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)) == pid else { return }
        unlink(path)
    }
}
