#if canImport(Glibc)
import Glibc
#endif

/// The upload folder: `<IdPhoto>.jpg` and `<IdPhoto>-thumb.jpg`, as the
/// original laid it out and as the web server serves it.
public struct PhotoFiles: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    public func photoPath(id: Int64) -> String { "\(directory)/\(id).jpg" }
    public func thumbnailPath(id: Int64) -> String { "\(directory)/\(id)-thumb.jpg" }

    /// Makes the photo and its thumbnail visible under their final names,
    /// durably: each file is on disk (fsync) before its rename, and the
    /// directory entry after it. The spool file is consumed.
    public func publish(photoSpool: String, thumbnail: [UInt8], id: Int64) throws(SystemError) {
        let thumbnailSpool = try SpoolFile(directory: directory)
        do throws(SystemError) {
            if let code = thumbnail.withUnsafeBytes({ thumbnailSpool.write($0) }) {
                throw SystemError("write thumbnail", code: code)
            }
            try Self.syncAndClose(path: thumbnailSpool.path, thumbnailSpool)
            try Self.syncFile(photoSpool)
            try Self.rename(thumbnailSpool.path, to: thumbnailPath(id: id))
        } catch {
            thumbnailSpool.discard()
            throw error
        }
        do throws(SystemError) {
            // Readable by the web server, as a file PHP moved into place was.
            chmod(photoSpool, 0o644)
            try Self.rename(photoSpool, to: photoPath(id: id))
            try Self.syncFile(directory)
        } catch {
            remove(id: id)
            throw error
        }
    }

    public func remove(id: Int64) {
        unlink(photoPath(id: id))
        unlink(thumbnailPath(id: id))
    }

    private static func syncAndClose(path: String, _ spool: SpoolFile) throws(SystemError) {
        if let code = spool.close() { throw SystemError("close \(path)", code: code) }
        chmod(path, 0o644)
        try syncFile(path)
    }

    private static func syncFile(_ path: String) throws(SystemError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open \(path)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SystemError("fsync \(path)") }
    }

    private static func rename(_ from: String, to: String) throws(SystemError) {
        guard Glibc.rename(from, to) == 0 else { throw SystemError("rename to \(to)") }
    }
}
