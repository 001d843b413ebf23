#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// A file every process of the installation maps (MAP_SHARED), however it
/// was started: our supervisor and its workers, mod_fcgid's processes (each
/// a server of its own), a CGI process per request, several supervisors.
/// Memory shared through the file, not through fork.
///
/// Opening is safe against two processes creating the file at once and
/// against a file that cannot be trusted as it is (left half-initialised by
/// a crash, written by another version, from before a reboot: a process-
/// shared mutex held then would never be released). Two locks on the file:
/// - byte 0, exclusive, while a process checks (and maybe initialises) it;
/// - byte 1, shared, for as long as a process uses it: the file is only
///   initialised again when nobody has it mapped.
/// Both are open-file-description locks: forked workers share their
/// supervisor's, and the kernel drops them however the holders end.
final class SharedMemoryFile: @unchecked Sendable {
    /// Why the file could not be used.
    enum OpenError: Error, CustomStringConvertible {
        case system(SystemError)
        /// Someone else's file: whoever owns it could forge the counters.
        case notOurs(path: String, owner: uid_t)
        /// Processes of another layout (an older binary still running)
        /// have it mapped: it cannot be initialised again under them.
        case inUseByAnotherLayout(path: String)

        var description: String {
            switch self {
            case .system(let error): "\(error)"
            case .notOurs(let path, let owner):
                "\(path) belongs to uid \(owner), not to uid \(geteuid()) which runs the server: remove it (it is made again)"
            case .inUseByAnotherLayout(let path):
                "\(path) is in use by processes of another version of the server"
            }
        }
    }

    static let headerBytes = 128
    private static let magic: UInt64 = 0x4952_5348_4152_4544 // "IRSHARED"
    private static let readyMark: UInt64 = 0x5245_4144_5921_2121 // "READY!!!"
    private enum Field: Int { case magic = 0, layout = 8, size = 16, state = 24, bootID = 32 }
    private static let bootIDBytes = 40
    private static let checkLock = 0, usersLock = 1

    let path: String
    /// The caller's part of the file, after the header.
    let payload: UnsafeMutableRawPointer
    /// Kept open for the life of the process: its lock marks the file in use.
    private let fd: Int32

    private init(path: String, payload: UnsafeMutableRawPointer, fd: Int32) {
        self.path = path
        self.payload = payload
        self.fd = fd
    }

    /// Maps `path`, creating it or setting it up again when it is not a
    /// valid file of this `layout` made since the last boot: then
    /// `initialize` prepares the zeroed payload before any process sees it.
    /// `layout` must change whenever the payload's layout does.
    static func open(path: String, payloadBytes: Int, layout: UInt64,
                     initialize: (UnsafeMutableRawPointer) -> Void) throws(OpenError) -> SharedMemoryFile {
        let total = headerBytes + payloadBytes
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .system(SystemError("open \(path)")) }
        do throws(OpenError) {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw OpenError.system(SystemError("stat \(path)")) }
            guard info.st_uid == geteuid() else { throw OpenError.notOurs(path: path, owner: info.st_uid) }
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw OpenError.system(SystemError("\(path) is not a regular file", code: EINVAL))
            }
            if info.st_mode & 0o077 != 0 { fchmod(fd, 0o600) }
            try lock(fd, checkLock, F_WRLCK, wait: true, path)
            defer { _ = csystem_lock_byte(fd, checkLock, Int32(F_UNLCK), 0) }
            // The size again, under the lock: another process may have set the file up since.
            guard fstat(fd, &info) == 0 else { throw OpenError.system(SystemError("stat \(path)")) }
            let valid = isValid(fd, size: Int(info.st_size), total: total, layout: layout)
            if valid {
                // Nobody holds byte 1 exclusively without holding byte 0 as well.
                try lock(fd, usersLock, F_RDLCK, wait: false, path)
            } else if csystem_lock_byte(fd, usersLock, Int32(F_WRLCK), 0) != 0 {
                throw OpenError.inUseByAnotherLayout(path: path)
            }
            if !valid {
                // Zeroed afresh: nothing of the old contents survives.
                guard ftruncate(fd, 0) == 0, ftruncate(fd, off_t(total)) == 0 else {
                    throw OpenError.system(SystemError("resize \(path)"))
                }
            }
            guard let memory = mmap(nil, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), memory != MAP_FAILED else {
                throw OpenError.system(SystemError("mmap \(path)"))
            }
            if !valid {
                initialize(memory + headerBytes)
                memory.storeBytes(of: magic, toByteOffset: Field.magic.rawValue, as: UInt64.self)
                memory.storeBytes(of: layout, toByteOffset: Field.layout.rawValue, as: UInt64.self)
                memory.storeBytes(of: UInt64(total), toByteOffset: Field.size.rawValue, as: UInt64.self)
                let boot = bootID()
                (memory + Field.bootID.rawValue).initializeMemory(as: UInt8.self, from: boot, count: boot.count)
                // Last: a process that finds it knows the rest is in place.
                csystem_store(memory.advanced(by: Field.state.rawValue).assumingMemoryBound(to: CLongLong.self),
                              CLongLong(bitPattern: readyMark))
                try lock(fd, usersLock, F_RDLCK, wait: false, path)
            }
            return SharedMemoryFile(path: path, payload: memory + headerBytes, fd: fd)
        } catch {
            close(fd)
            throw error
        }
    }

    private static func lock(_ fd: Int32, _ offset: Int, _ type: Int32, wait: Bool, _ path: String) throws(OpenError) {
        guard csystem_lock_byte(fd, offset, type, wait ? 1 : 0) == 0 else {
            throw .system(SystemError("lock \(path)"))
        }
    }

    /// Whether the file holds a header this layout wrote since the last boot.
    private static func isValid(_ fd: Int32, size: Int, total: Int, layout: UInt64) -> Bool {
        guard size == total else { return false }
        var header = [UInt8](repeating: 0, count: headerBytes)
        guard header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, headerBytes, 0) }) == headerBytes else { return false }
        func word(_ field: Field) -> UInt64 {
            header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: field.rawValue, as: UInt64.self) }
        }
        return word(.magic) == magic && word(.layout) == layout && word(.size) == UInt64(total)
            && word(.state) == readyMark
            && Array(header[Field.bootID.rawValue..<Field.bootID.rawValue + bootIDBytes]) == bootID()
    }

    /// This boot's id, padded: a file from an earlier boot may hold mutexes
    /// of processes that no longer exist, which nothing would ever release.
    private static func bootID() -> [UInt8] {
        let id = readFile("/proc/sys/kernel/random/boot_id") ?? []
        return Array((id + [UInt8](repeating: 0, count: bootIDBytes)).prefix(bootIDBytes))
    }
}
