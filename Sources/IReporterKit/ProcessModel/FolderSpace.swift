#if canImport(Glibc)
import Glibc
#endif

/// What a folder's file system leaves the server's user (statvfs: nothing
/// is written): the upload folder's, for the metrics and the readiness page.
struct FolderSpace {
    /// Bytes the server's user may still write (f_bavail blocks).
    let freeBytes: Int64
    /// Files it may still make.
    let freeFiles: UInt
    let readOnly: Bool

    /// Nil, with errno, when the folder cannot be asked.
    init?(_ directory: String) {
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return nil }
        self.init(info)
    }

    init(_ info: statvfs) {
        freeBytes = Int64(clamping: UInt64(info.f_bavail) &* UInt64(info.f_frsize))
        freeFiles = info.f_favail
        readOnly = info.f_flag & UInt(ST_RDONLY) != 0
    }
}
