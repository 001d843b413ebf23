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
/// - rows whose original is gone (under both names) while sizes of it are
///   left in the tree: a photo that was whole and lost its original,
///   listed and never changed (only a backup brings it back; setting it
///   aside would lose what is left);
/// - comments, votes, counts and details of photos that no longer exist (a
///   `delete` cut short on the original MyISAM table): removed;
/// - in the photos' tree (`photos/`): files of photos without a row are
///   files without a row (moved into `.removed/`), sizes under another
///   secret than the row's are removed (made again when asked for), and a
///   photo gets its original in the tree (a hard link) and, as
///   `legacy_photo_urls` says, its 2012 names and thumbnail or not
///   (`UploadFolder.legacyNames`: off removes them once the tree has it).
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

    public enum Step: String, Sendable { case spools, thumbnails, reactions, files, rows, sizes, names }

    public struct Report: Equatable, Sendable {
        public var rows = 0
        public var photoFiles = 0
        public var spools: [String] = []
        public var missingThumbnails: [Int64] = []
        public var filesWithoutRow: [String] = []
        public var rowsWithoutPhoto: [Int64] = []
        /// Rows whose original is gone but sizes of it are left: listed, never changed.
        public var lostOriginals: [Int64] = []
        /// Sizes in the tree under another secret than their row's.
        public var staleSizes: [String] = []
        /// Photos whose names are not as `legacy_photo_urls` says: the
        /// original not in the tree, or the 2012 names there when they should
        /// not be (or missing when they should).
        public var misnamed: [Int64] = []
        /// Comments, votes, counts, details and search words of deleted photos, removed.
        public var orphanReactions = 0
        /// The steps taken (the others were only found).
        public var applied: Set<Step> = []
        /// Why nothing was changed although something was found.
        public var refusal: String?

        public var isClean: Bool {
            spools.isEmpty && missingThumbnails.isEmpty && filesWithoutRow.isEmpty && rowsWithoutPhoto.isEmpty
                && staleSizes.isEmpty && misnamed.isEmpty && lostOriginals.isEmpty
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
                   part(rowsWithoutPhoto.count, "rows without a photo file", .rows, "moved to photos_removed"),
                   part(staleSizes.count, "sizes under an old secret", .sizes, "removed"),
                   part(misnamed.count, "photos to rename in the tree", .names, "renamed"),
                   "\(lostOriginals.count) photos whose original is gone" + (lostOriginals.isEmpty ? "" : " (kept: only a backup restores them)")]
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
        let rows = try Self.allRows(photos, progress: progress, checkStop: checkStop)

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
        // The tree: every photo's sizes, by the photo.
        var treeFiles: [Int64: [String]] = [:]
        try forEachTreeFile { id, path in treeFiles[id, default: []].append(path) }
        let treeOriginals = Set(treeFiles.compactMap { id, paths in
            paths.contains { PhotoTree.parse(fileName: $0.split(separator: "/").last!)?.size == .original } ? id : nil
        })
        withoutRow += treeFiles.filter { !rows.contains($0.key) }.flatMap(\.value)
        photoFiles.formUnion(treeOriginals)
        report.rows = rows.count
        report.photoFiles = photoFiles.count

        // A second look at everything that seems missing, rows and files both.
        report.spools = report.spools.filter(oldEnough).sorted()
        let candidates = withoutRow.filter(oldEnough)
        let nowRows = try existing(candidates.compactMap(Self.photoID))
        report.filesWithoutRow = candidates.filter { !nowRows.contains(Self.photoID($0)!) }.sorted()
        let seemMissing = rows.subtracting(photoFiles).sorted()
        let stillRows = try existing(seemMissing)
        let noOriginal = seemMissing.filter { stillRows.contains($0) && files.anyOriginal(id: $0) == nil }
        // Sizes of it in the tree: it was whole once (they are made from the
        // original), and lost its original since. (A thumbnail alone is what
        // an upload cut short leaves on MyISAM: the row and thumbnail go aside.)
        let partlyThere = Set(noOriginal.filter { treeFiles[$0] != nil })
        report.lostOriginals = noOriginal.filter(partlyThere.contains)
        report.rowsWithoutPhoto = noOriginal.filter { !partlyThere.contains($0) }
        if files.legacyNames {
            report.missingThumbnails = rows.intersection(photoFiles).subtracting(thumbnails).sorted().filter { id in
                files.anyOriginal(id: id).map { oldEnough(String($0.dropFirst(files.directory.count + 1))) } ?? false
            }
        }
        // The rows' secrets, for what is in the tree and what should be
        // (with the 2012 names on, a photo stored before the tree needs none:
        // its sizes link it in when first asked for).
        let named = rows.intersection(files.legacyNames ? Set(treeFiles.keys) : photoFiles).sorted()
        let secrets = try Self.secrets(of: named, in: photos, checkStop: checkStop)
        for id in named {
            guard let secret = secrets[id] else { continue } // no migration 006: the 2012 names alone
            for path in treeFiles[id] ?? [] {
                if let file = PhotoTree.parse(fileName: path.split(separator: "/").last!), file.secret != secret,
                   file.size != .original, oldEnough(path) {
                    report.staleSizes.append(path)
                }
            }
            let inTree = access(files.tree.path(id: id, secret: secret, size: .original), F_OK) == 0
            let legacy = access(files.photoPath(id: id), F_OK) == 0
            // (A lost original is no name to fix.)
            if files.legacyNames ? !legacy : (legacy || !inTree), !partlyThere.contains(id) { report.misnamed.append(id) }
        }
        report.staleSizes.sort()

        let destructive = !report.filesWithoutRow.isEmpty || !report.rowsWithoutPhoto.isEmpty
        if destructive, !actions.force, let reason = suspicion(report) {
            report.refusal = reason
            return report
        }
        if actions.safeSteps {
            // The tree's root, for Apache's ErrorDocument in it before any upload made it.
            if mkdir(files.tree.root, 0o755) == 0 {
                chmod(files.tree.root, 0o755)
                giveToFolderOwner(files.tree.root)
            }
            for name in report.spools { unlink("\(files.directory)/\(name)") }
            report.applied.insert(.spools)
            for (done, id) in report.missingThumbnails.enumerated() {
                try checkStop()
                progress?.update("making thumbnails", done: done, of: report.missingThumbnails.count)
                if let original = files.anyOriginal(id: id),
                   let image = try? thumbnailer.thumbnail(ofFileAt: original, maxPixels: maxImagePixels) {
                    try files.publishThumbnail(image.jpeg, id: id)
                }
            }
            report.applied.insert(.thumbnails)
            report.orphanReactions = try photos.removeOrphanedReactions()
            report.applied.insert(.reactions)
            for path in report.staleSizes { unlink("\(files.directory)/\(path)") }
            report.applied.insert(.sizes)
            for (done, id) in report.misnamed.enumerated() {
                try checkStop()
                progress?.update("naming photos", done: done, of: report.misnamed.count)
                if let secret = secrets[id] { try name(id, secret: secret) }
            }
            report.applied.insert(.names)
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

    /// Every IdPhoto of the table, read in batches.
    static func allRows(_ photos: any PhotoStore, progress: TaskProgress?, checkStop: () throws -> Void) throws -> Set<Int64> {
        var rows = Set<Int64>()
        var after: Int64 = 0
        while true {
            let ids = try photos.ids(after: after, limit: batch)
            guard let last = ids.last else { break }
            rows.formUnion(ids)
            after = last
            progress?.update("reading rows", done: rows.count)
            try checkStop()
        }
        progress?.finish("rows read", done: rows.count)
        return rows
    }

    /// Why the damage looks like a wrong place for the photos (`setting`
    /// names it: `upload_dir`, `s3_url`) or the wrong database rather than
    /// what crashes leave (a few rows, a few files). `orphanPhotos`: the
    /// photos (not thumbnails, not sizes) among the files without a row.
    static func suspicion(_ report: Report, place: String, setting: String, orphanPhotos: Int) -> String? {
        let wrongPlace = setting == "upload_dir" ? "a wrong upload_dir, or a disk that is not mounted" : "a wrong \(setting)"
        if report.rows > 0 && report.photoFiles == 0 {
            return "\(place) holds no photo file, but the photos table has \(report.rows) rows: \(wrongPlace)?"
        }
        if report.rowsWithoutPhoto.count * 2 > report.rows {
            return "\(report.rowsWithoutPhoto.count) of the \(report.rows) rows have no photo file in \(place): that many looks like \(wrongPlace), not like crashes"
        }
        if report.photoFiles > 0 && report.rows == 0 {
            return "the photos table is empty, but \(place) holds \(report.photoFiles) photo files: the wrong database (db_url)?"
        }
        if orphanPhotos * 2 > report.photoFiles {
            return "\(orphanPhotos) of the \(report.photoFiles) photo files in \(place) have no row: that many looks like the wrong database (db_url), not like crashes"
        }
        return nil
    }

    /// The shared checks, then whether the folder is on another disk than last time.
    private func suspicion(_ report: Report) -> String? {
        let folder = files.directory
        let orphanPhotos = Set(report.filesWithoutRow.filter { path in
            Self.photoFile(path)?.isThumbnail == false || PhotoTree.parse(fileName: path.split(separator: "/").last!)?.size == .original
        }.compactMap(Self.photoID)).count
        if let reason = Self.suspicion(report, place: folder, setting: "upload_dir", orphanPhotos: orphanPhotos) { return reason }
        if let recorded = recordedDevice(), let device = device(), recorded != device {
            return "\(folder) is on another device (\(device)) than when it was last found healthy (\(recorded)): another disk mounted there, or none?"
        }
        return nil
    }

    /// Gives the photo its original in the tree and its 2012 names and
    /// thumbnail as `legacy_photo_urls` says; the 2012 names go only once
    /// the tree holds the photo.
    private func name(_ id: Int64, secret: PhotoSecret) throws {
        let original = files.tree.path(id: id, secret: secret, size: .original)
        if !(try files.linkOriginalIntoTree(id: id, secret: secret)), let other = files.anyOriginal(id: id) {
            // Only under an older secret: the row's own name for it.
            try files.tree.makeFolder(of: id)
            guard link(other, original) == 0 || errno == EEXIST else { throw SystemError("link \(original)") }
        }
        guard access(original, F_OK) == 0 else { return }
        if files.legacyNames {
            if access(files.photoPath(id: id), F_OK) != 0, link(original, files.photoPath(id: id)) != 0, errno != EEXIST {
                throw SystemError("link \(files.photoPath(id: id))")
            }
            if access(files.thumbnailPath(id: id), F_OK) != 0,
               let image = try? thumbnailer.thumbnail(ofFileAt: original, maxPixels: maxImagePixels) {
                try files.publishThumbnail(image.jpeg, id: id)
            }
        } else {
            unlink(files.photoPath(id: id))
            unlink(files.thumbnailPath(id: id))
        }
        try PhotoTree.sync(files.tree.folder(of: id))
        try PhotoTree.sync(files.directory)
    }

    private func forEachTreeFile(_ body: (Int64, String) -> Void) throws(SystemError) {
        try files.tree.forEachFile(body)
    }

    /// Into `.removed/` (made private to the server's user), never over a
    /// file there; a file of the tree under its own name.
    private func setAside(file name: String) throws(SystemError) {
        let folder = "\(files.directory)/\(Self.removedFolder)"
        if mkdir(folder, 0o700) == 0 {
            giveToFolderOwner(folder)
        } else if errno != EEXIST {
            throw SystemError("mkdir \(folder)")
        }
        var target = "\(folder)/\(name.split(separator: "/").last!)"
        var copy = 1
        while access(target, F_OK) == 0 {
            copy += 1
            target = "\(folder)/\(name).\(copy)"
        }
        guard rename("\(files.directory)/\(name)", target) == 0 else { throw SystemError("move \(name) to \(folder)") }
    }

    private func existing(_ ids: [Int64]) throws -> Set<Int64> { try Self.existing(ids, in: photos) }

    /// Those of `ids` with a row now, asked in batches.
    static func existing(_ ids: [Int64], in photos: any PhotoStore) throws -> Set<Int64> {
        var found = Set<Int64>()
        for start in stride(from: 0, to: ids.count, by: 1000) {
            found.formUnion(try photos.existing(Array(ids[start..<min(start + 1000, ids.count)])))
        }
        return found
    }

    /// The rows' secrets, asked in batches (a row without one is absent).
    static func secrets(of ids: [Int64], in photos: any PhotoStore, checkStop: () throws -> Void) throws -> [Int64: PhotoSecret] {
        var secrets: [Int64: PhotoSecret] = [:]
        for start in stride(from: 0, to: ids.count, by: 1000) {
            try checkStop()
            secrets.merge(try photos.secrets(ids: Set(ids[start..<min(start + 1000, ids.count)]))) { first, _ in first }
        }
        return secrets
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

    /// The IdPhoto of a file of the folder (`photoFile`) or of the tree.
    static func photoID(_ path: String) -> Int64? {
        path.hasPrefix("\(PhotoTree.folderName)/") ? PhotoTree.parse(fileName: path.split(separator: "/").last!)?.id
            : photoFile(path)?.id
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
