#if canImport(Glibc)
import Glibc
#endif

/// The upload folder: `<IdPhoto>.jpg` and `<IdPhoto>-thumb.jpg`, as the
/// original laid it out and as the web server serves it.
public struct UploadFolder: PhotoFileStore, Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    public func makeSpool() throws(SystemError) -> SpoolFile { try SpoolFile(directory: directory) }

    public func photoPath(id: Int64) -> String { "\(directory)/\(id).jpg" }
    public func thumbnailPath(id: Int64) -> String { "\(directory)/\(id)-thumb.jpg" }

    /// Makes the photo and its thumbnail visible under their final names,
    /// durably: each file is on disk (fsync) before its rename, and the
    /// directory entries after them. The spool file is consumed.
    public func publish(photoSpool: String, thumbnail: [UInt8], id: Int64) throws(SystemError) {
        try Self.syncFile(photoSpool)
        try placeThumbnail(thumbnail, id: id)
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

    /// Writes a thumbnail alone (made again for an existing photo).
    public func publishThumbnail(_ thumbnail: [UInt8], id: Int64) throws(SystemError) {
        try placeThumbnail(thumbnail, id: id)
        try Self.syncFile(directory)
    }

    private func placeThumbnail(_ thumbnail: [UInt8], id: Int64) throws(SystemError) {
        let spool = try makeSpool()
        do throws(SystemError) {
            if let code = thumbnail.withUnsafeBytes({ spool.write($0) }) { throw SystemError("write thumbnail", code: code) }
            if let code = spool.close() { throw SystemError("close \(spool.path)", code: code) }
            chmod(spool.path, 0o644)
            try Self.syncFile(spool.path)
            try Self.rename(spool.path, to: thumbnailPath(id: id))
        } catch {
            spool.discard()
            throw error
        }
    }

    public func remove(id: Int64) {
        unlink(photoPath(id: id))
        unlink(thumbnailPath(id: id))
    }

    /// Removes a deleted photo's files and syncs the directory, so that the
    /// deletion survives a crash as its row's did.
    public func discard(id: Int64) throws(SystemError) {
        for path in [photoPath(id: id), thumbnailPath(id: id)] where unlink(path) != 0 && errno != ENOENT {
            throw SystemError("remove \(path)")
        }
        try Self.syncFile(directory)
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
