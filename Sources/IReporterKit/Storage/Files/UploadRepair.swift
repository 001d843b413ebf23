#if canImport(Glibc)
import Glibc
#endif

/// Finds and clears what a crash can leave in the upload folder and the
/// photos table (`ireporter repair`, and the sweep at every start):
/// - spool files (`.spool-*`) no request owns any more: removed;
/// - a missing thumbnail beside an existing photo and row: made again;
/// - photo or thumbnail files without a row (a crash after the files were
///   renamed into place, before the row was committed): moved into
///   `.removed/` in the folder;
/// - rows without a photo file (MyISAM, which cannot roll back, or a
///   PHP-era upload without a file): moved to the table `photos_removed`;
/// - comments, votes, counts and details of photos that no longer exist (a
///   `delete` cut short on the original MyISAM table): removed.
///
/// The last two are destructive (though restorable), taken only when
/// `Actions` say so and never when the damage looks like a wrong path, a
/// disk that is not mounted or the wrong database: then the report's
/// `refusal` says why and nothing at all is changed.
///
/// A consistent view while uploads commit: the rows are read before the
/// folder is listed (a committed row had its files before its commit), and
/// whatever looks missing is looked at again, rows and files, before it is
/// called missing. Only files older than `graceSeconds` are touched.
public struct UploadRepair {
    /// What a run may change.
    public struct Actions: Sendable {
        /// Remove old spool files, make missing thumbnails.
        public var safeSteps = true
        public var setAsideFiles = false
        public var setAsideRows = false
        /// Go on even when the damage looks like a wrong path.
        public var force = false

        public init(safeSteps: Bool = true, setAsideFiles: Bool = false, setAsideRows: Bool = false, force: Bool = false) {
            (self.safeSteps, self.setAsideFiles, self.setAsideRows, self.force) = (safeSteps, setAsideFiles, setAsideRows, force)
        }

        /// Nothing: what a run would do.
        public static let dryRun = Actions(safeSteps: false)
    }

    public enum Step: String, Sendable { case spools, thumbnails, reactions, files, rows }

    public struct Report: Equatable, Sendable {
        public var rows = 0
        public var photoFiles = 0
        public var spools: [String] = []
        public var missingThumbnails: [Int64] = []
        public var filesWithoutRow: [String] = []
        public var rowsWithoutPhoto: [Int64] = []
        /// Comments, votes, counts, details and search words of deleted photos, removed.
        public var orphanReactions = 0
        /// The steps taken (the others were only found).
        public var applied: Set<Step> = []
        /// Why nothing was changed although something was found.
        public var refusal: String?

        public var isClean: Bool {
            spools.isEmpty && missingThumbnails.isEmpty && filesWithoutRow.isEmpty && rowsWithoutPhoto.isEmpty
        }

        /// One line: what was found, and done or not.
        public var summary: String {
            func part(_ count: Int, _ what: String, _ step: Step, _ done: String) -> String {
                "\(count) \(what)" + (count == 0 ? "" : applied.contains(step) ? " (\(done))" : " (not \(done))")
            }
            return "\(rows) rows, \(photoFiles) photo files: "
                + [part(spools.count, "spool files", .spools, "removed"),
                   part(missingThumbnails.count, "missing thumbnails", .thumbnails, "made"),
                   part(orphanReactions, "reactions of deleted photos", .reactions, "removed"),
                   part(filesWithoutRow.count, "files without a row", .files, "moved to .removed/"),
                   part(rowsWithoutPhoto.count, "rows without a photo file", .rows, "moved to photos_removed")]
                .joined(separator: ", ")
        }
    }

    /// Ended by a stop request (`TaskProgress`): what was done is whole.
    public struct Stopped: Error {
        public var report: Report
    }

    static let removedFolder = ".removed"
    /// Records the folder's device when a run found it healthy.
    static let marker = ".ireporter-upload-dir"
    private static let batch = 10_000

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

    func run(graceSeconds: Int, actions: Actions, progress: TaskProgress? = nil) throws -> Report {
        var report = Report()
        let now = Int(time(nil))
        func oldEnough(_ name: String) -> Bool {
            var info = stat()
            return lstat("\(files.directory)/\(name)", &info) == 0 && now - Int(info.st_mtim.tv_sec) >= graceSeconds
        }
        func checkStop() throws {
            if progress?.stopRequested == true { throw Stopped(report: report) }
        }

        // The rows first: any of them had its files before it was committed.
        var rows = Set<Int64>()
        var after: Int64 = 0
        while true {
            let ids = try photos.ids(after: after, limit: Self.batch)
            guard let last = ids.last else { break }
            rows.formUnion(ids)
            after = last
            progress?.update("reading rows", done: rows.count)
            try checkStop()
        }
        progress?.finish("rows read", done: rows.count)

        var photoFiles = Set<Int64>(), thumbnails = Set<Int64>()
        var withoutRow: [String] = []
        var entries = 0
        try forEachDirectoryEntry(files.directory) { name, _ in
            entries += 1
            if entries % 100_000 == 0 { progress?.update("listing \(files.directory)", done: entries) }
            if name.hasPrefix(".spool-") { report.spools.append(name); return }
            guard let (id, isThumbnail) = Self.photoFile(name) else { return }
            if isThumbnail { thumbnails.insert(id) } else { photoFiles.insert(id) }
            if !rows.contains(id) { withoutRow.append(name) }
        }
        progress?.finish("files listed", done: entries)
        report.rows = rows.count
        report.photoFiles = photoFiles.count

        // A second look at everything that seems missing, rows and files both.
        report.spools = report.spools.filter(oldEnough).sorted()
        let candidates = withoutRow.filter(oldEnough)
        let nowRows = try existing(candidates.compactMap { Self.photoFile($0)?.id })
        report.filesWithoutRow = candidates.filter { !nowRows.contains(Self.photoFile($0)!.id) }.sorted()
        let seemMissing = rows.subtracting(photoFiles).sorted()
        let stillRows = try existing(seemMissing)
        report.rowsWithoutPhoto = seemMissing.filter { stillRows.contains($0) && access(files.photoPath(id: $0), F_OK) != 0 }
        report.missingThumbnails = rows.intersection(photoFiles).subtracting(thumbnails).sorted().filter { oldEnough("\($0).jpg") }

        let destructive = !report.filesWithoutRow.isEmpty || !report.rowsWithoutPhoto.isEmpty
        if destructive, !actions.force, let reason = suspicion(report) {
            report.refusal = reason
            return report
        }
        if actions.safeSteps {
            for name in report.spools { unlink("\(files.directory)/\(name)") }
            report.applied.insert(.spools)
            for (done, id) in report.missingThumbnails.enumerated() {
                try checkStop()
                progress?.update("making thumbnails", done: done, of: report.missingThumbnails.count)
                if let image = try? thumbnailer.thumbnail(ofFileAt: files.photoPath(id: id), maxPixels: maxImagePixels) {
                    try files.publishThumbnail(image.jpeg, id: id)
                }
            }
            report.applied.insert(.thumbnails)
            report.orphanReactions = try photos.removeOrphanedReactions()
            report.applied.insert(.reactions)
        }
        if actions.setAsideFiles {
            for name in report.filesWithoutRow { try setAside(file: name) }
            report.applied.insert(.files)
        }
        if actions.setAsideRows {
            for (done, id) in report.rowsWithoutPhoto.enumerated() {
                try checkStop()
                progress?.update("setting rows aside", done: done, of: report.rowsWithoutPhoto.count)
                try photos.setAside(id: id, reason: "no photo file in \(files.directory)")
                if access(files.thumbnailPath(id: id), F_OK) == 0 { try setAside(file: "\(id)-thumb.jpg") }
            }
            report.applied.insert(.rows)
        }
        if actions.safeSteps || actions.setAsideFiles || actions.setAsideRows { recordDevice() }
        return report
    }

    /// Why the damage looks like a wrong path, a disk not mounted or the
    /// wrong database rather than what crashes leave (a few rows, a few files).
    private func suspicion(_ report: Report) -> String? {
        let folder = files.directory
        let orphanPhotos = report.filesWithoutRow.filter { Self.photoFile($0)?.isThumbnail == false }.count
        if report.rows > 0 && report.photoFiles == 0 {
            return "\(folder) holds no photo file, but the photos table has \(report.rows) rows: a wrong upload_dir, or a disk that is not mounted?"
        }
        if report.rowsWithoutPhoto.count * 2 > report.rows {
            return "\(report.rowsWithoutPhoto.count) of the \(report.rows) rows have no photo file in \(folder): that many looks like a wrong upload_dir or a disk that is not mounted, not like crashes"
        }
        if report.photoFiles > 0 && report.rows == 0 {
            return "the photos table is empty, but \(folder) holds \(report.photoFiles) photo files: the wrong database (db_url)?"
        }
        if orphanPhotos * 2 > report.photoFiles {
            return "\(orphanPhotos) of the \(report.photoFiles) photo files in \(folder) have no row: that many looks like the wrong database (db_url), not like crashes"
        }
        if let recorded = recordedDevice(), let device = device(), recorded != device {
            return "\(folder) is on another device (\(device)) than when it was last found healthy (\(recorded)): another disk mounted there, or none?"
        }
        return nil
    }

    /// Into `.removed/` (made private to the server's user), never over a file there.
    private func setAside(file name: String) throws(SystemError) {
        let folder = "\(files.directory)/\(Self.removedFolder)"
        if mkdir(folder, 0o700) == 0 {
            giveToFolderOwner(folder)
        } else if errno != EEXIST {
            throw SystemError("mkdir \(folder)")
        }
        var target = "\(folder)/\(name)"
        var copy = 1
        while access(target, F_OK) == 0 {
            copy += 1
            target = "\(folder)/\(name).\(copy)"
        }
        guard rename("\(files.directory)/\(name)", target) == 0 else { throw SystemError("move \(name) to \(folder)") }
    }

    /// Those of `ids` with a row now, asked in batches.
    private func existing(_ ids: [Int64]) throws -> Set<Int64> {
        var found = Set<Int64>()
        for start in stride(from: 0, to: ids.count, by: 1000) {
            found.formUnion(try photos.existing(Array(ids[start..<min(start + 1000, ids.count)])))
        }
        return found
    }

    private func device() -> UInt64? {
        var info = stat()
        return stat(files.directory, &info) == 0 ? UInt64(info.st_dev) : nil
    }

    private func recordedDevice() -> UInt64? {
        readFile("\(files.directory)/\(Self.marker)").flatMap { UInt64(String(decoding: $0, as: UTF8.self).trimmingSpaces) }
    }

    private func recordDevice() {
        guard let device = device(), recordedDevice() != device else { return }
        let bytes = Array("\(device)\n".utf8)
        let fd = open("\(files.directory)/\(Self.marker)", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { return }
        _ = bytes.withUnsafeBytes { writeAll(fd, $0) }
        close(fd)
        giveToFolderOwner("\(files.directory)/\(Self.marker)")
    }

    /// What a repair run as root makes stays the server's (the upload
    /// folder's owner): its sweep sets files aside into `.removed/` too.
    private func giveToFolderOwner(_ path: String) {
        var folder = stat()
        guard geteuid() == 0, stat(files.directory, &folder) == 0 else { return }
        chown(path, folder.st_uid, folder.st_gid)
    }

    /// The IdPhoto of `<id>.jpg` or `<id>-thumb.jpg`, exactly as the server
    /// names them (`007.jpg` is someone else's file).
    static func photoFile(_ name: String) -> (id: Int64, isThumbnail: Bool)? {
        let isThumbnail = name.hasSuffix("-thumb.jpg")
        guard isThumbnail || name.hasSuffix(".jpg"),
              let id = Int64(name.dropLast(isThumbnail ? 10 : 4)), id > 0,
              name == "\(id)" + (isThumbnail ? "-thumb.jpg" : ".jpg") else { return nil }
        return (id, isThumbnail)
    }
}
