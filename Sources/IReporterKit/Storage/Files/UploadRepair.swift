#if canImport(Glibc)
import Glibc
#endif

/// Finds and clears what a crash can leave in the upload folder and the
/// photos table (`ireporter repair`, and a sweep at every start):
/// - spool files (`.spool-*`) no request owns any more;
/// - photo or thumbnail files whose row does not exist (a crash after the
///   files were renamed into place, before the row was committed);
/// - a missing thumbnail beside an existing photo and row: made again;
/// - rows whose photo file is missing (MyISAM, which cannot roll back, or a
///   PHP-era upload without a file): reported, and deleted by `repair`;
/// - comments, votes, counts and details of photos that no longer exist (a
///   `delete` cut short on the original MyISAM table): removed by `repair`.
/// Only files older than `graceSeconds` are touched, and rows are checked
/// twice, so an upload in progress elsewhere is never taken for debris.
public struct UploadRepair {
    public struct Report: Equatable, CustomStringConvertible {
        public var removedSpools: [String] = []
        public var removedOrphanFiles: [String] = []
        public var regeneratedThumbnails: [Int64] = []
        public var rowsWithoutPhoto: [Int64] = []
        public var deletedRows: [Int64] = []
        public var removedOrphanReactions = 0

        public var isClean: Bool {
            removedSpools.isEmpty && removedOrphanFiles.isEmpty && regeneratedThumbnails.isEmpty
                && rowsWithoutPhoto.isEmpty && deletedRows.isEmpty && removedOrphanReactions == 0
        }

        public var description: String {
            "removed \(removedSpools.count) spool files, \(removedOrphanFiles.count) files without a row; "
                + "made \(regeneratedThumbnails.count) missing thumbnails; "
                + "\(rowsWithoutPhoto.count) rows without a photo file" + (deletedRows.isEmpty ? "" : ", \(deletedRows.count) deleted")
                + (removedOrphanReactions == 0 ? "" : "; removed \(removedOrphanReactions) comments, votes and details of deleted photos")
        }
    }

    let files: UploadFolder
    let photos: any PhotoStore
    let thumbnailer: Thumbnailer
    let maxImagePixels: Int

    public init(files: UploadFolder, photos: any PhotoStore, maxImagePixels: Int,
                maxDecodeBytes: Int = Configuration().maxDecodeMemoryMiB << 20) {
        self.files = files
        self.photos = photos
        self.maxImagePixels = maxImagePixels
        thumbnailer = Thumbnailer(maxDecodeBytes: maxDecodeBytes)
    }

    public func run(graceSeconds: Int, deleteRows: Bool, dryRun: Bool = false) throws -> Report {
        var report = Report()
        let now = Int(time(nil))
        let entries = try listing()
        let rows = Set(try photos.allIDs())
        func oldEnough(_ name: String) -> Bool { entries[name].map { now - $0 >= graceSeconds } ?? false }
        func remove(_ name: String) { if !dryRun { unlink("\(files.directory)/\(name)") } }

        for name in entries.keys.sorted() {
            if name.hasPrefix(".spool-") {
                if oldEnough(name) { remove(name); report.removedSpools.append(name) }
                continue
            }
            guard let id = Self.photoID(in: name), !rows.contains(id), oldEnough(name) else { continue }
            remove(name)
            report.removedOrphanFiles.append(name)
        }
        for id in rows.sorted() {
            let photo = "\(id).jpg", thumbnail = "\(id)-thumb.jpg"
            if entries[photo] == nil {
                report.rowsWithoutPhoto.append(id)
            } else if entries[thumbnail] == nil && oldEnough(photo) {
                if !dryRun, let image = try? thumbnailer.thumbnail(ofFileAt: files.photoPath(id: id), maxPixels: maxImagePixels) {
                    try files.publishThumbnail(image.jpeg, id: id)
                }
                report.regeneratedThumbnails.append(id)
            }
        }
        if deleteRows && !report.rowsWithoutPhoto.isEmpty {
            // Checked again after the grace time: an upload in progress has its file by then.
            sleep(UInt32(min(max(graceSeconds, 0), 10)))
            let stillRows = Set(try photos.allIDs())
            for id in report.rowsWithoutPhoto where stillRows.contains(id) && access(files.photoPath(id: id), F_OK) != 0 {
                if !dryRun {
                    try photos.delete(id: id)
                    unlink(files.thumbnailPath(id: id))
                }
                report.deletedRows.append(id)
            }
        }
        if deleteRows && !dryRun {
            report.removedOrphanReactions = try photos.removeOrphanedReactions()
        }
        return report
    }

    /// The IdPhoto of `<id>.jpg` or `<id>-thumb.jpg`.
    static func photoID(in name: String) -> Int64? {
        if name.hasSuffix("-thumb.jpg"), let id = Int64(name.dropLast(10)), id > 0 { return id }
        if name.hasSuffix(".jpg"), let id = Int64(name.dropLast(4)), id > 0 { return id }
        return nil
    }

    /// Names in the upload folder with their modification times.
    private func listing() throws(SystemError) -> [String: Int] {
        var entries: [String: Int] = [:]
        for (name, info) in try directoryEntries(files.directory) where info.st_mode & S_IFMT == S_IFREG {
            entries[name] = Int(info.st_mtim.tv_sec)
        }
        return entries
    }
}
