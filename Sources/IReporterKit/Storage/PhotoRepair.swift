#if canImport(Glibc)
import Glibc
#endif

/// What a photo file is, by its name, the same in the upload folder and in
/// the bucket: one of the 2012 names or a size in the photos' tree.
public enum PhotoFileKind: Equatable, Sendable {
    /// `<IdPhoto>.jpg`
    case photo(id: Int64)
    /// `<IdPhoto>-thumb.jpg`
    case thumbnail(id: Int64)
    /// `photos/<a>/<b>/<IdPhoto>_<secret>[_<letter>].jpg`
    case size(id: Int64, secret: PhotoSecret, size: PhotoSize)

    public var id: Int64 {
        switch self {
        case .photo(let id), .thumbnail(let id), .size(let id, _, _): id
        }
    }

    /// The photo itself: under its 2012 name, or the tree's original.
    public var isOriginal: Bool {
        switch self {
        case .photo: true
        case .thumbnail: false
        case .size(_, _, let size): size == .original
        }
    }

    /// In the tree (made from the original: a photo that was whole once).
    var isInTree: Bool {
        if case .size = self { true } else { false }
    }
}

/// A photo file as a store listed it.
struct StoredPhotoFile {
    /// Its path in the folder, or its key in the bucket.
    let path: String
    let kind: PhotoFileKind
    /// Its last change (seconds since 1970) when the listing said it (the
    /// bucket's LastModified); nil: the store is asked when it matters.
    var listedModified: Int? = nil
}

/// A photo store as `PhotoRepair` sees it: the upload folder
/// (`UploadFolder`), the bucket (`S3PhotoFileStore`).
protocol RepairablePhotoStore {
    /// The folder or the bucket, for messages, and the setting that names it.
    var place: String { get }
    var placeSetting: String { get }
    /// This host's folder of spool files.
    var spoolDirectory: String { get }
    var legacyNames: Bool { get }
    /// Each file named as a photo's, in no order.
    func forEachPhotoFile(_ body: (StoredPhotoFile) -> Void) throws
    /// Its last change, seconds since 1970; nil when it is gone.
    func modified(_ file: StoredPhotoFile) -> Int?
    /// Whether the photo has its original now, under any name or secret.
    func hasOriginal(id: Int64) throws -> Bool
    /// Makes the photo's 2012 thumbnail from its original (`render`: the
    /// original's local path to the thumbnail's JPEG, nil when it cannot);
    /// false when none was made (the original no JPEG, or gone meanwhile).
    func makeThumbnail(id: Int64, _ render: (String) -> [UInt8]?) throws -> Bool
    /// The path of the photo's 2012 thumbnail, nil when it has none.
    func legacyThumbnail(id: Int64) throws -> String?
    /// Removes a size made again when asked for.
    func remove(_ path: String) throws
    /// Moves a file where no URL reaches it and an operator can take it back.
    func setAside(_ path: String) throws
    /// Whether the photo's names are not as `legacy_photo_urls` says.
    func isMisnamed(id: Int64, secret: PhotoSecret) -> Bool
    /// Names it as `legacy_photo_urls` says (links, its 2012 thumbnail made or removed).
    func relink(id: Int64, secret: PhotoSecret, _ render: (String) -> [UInt8]?) throws
    /// Why the store looks like another one than when it was last found
    /// healthy (a disk mounted in its place); nil when it does not.
    func changeSinceHealthy() -> String?
    /// Before the safe steps: what must be there before anything is stored.
    func prepare()
    /// After a run that changed it: the store was found healthy.
    func recordHealthy()
}

/// Finds and clears what a crash can leave in a photo store and the photos
/// table (`ireporter repair`, and the sweep at every start), one algorithm
/// for the upload folder and the bucket (`RepairablePhotoStore`):
/// - spool files (`.spool-*`) no request owns any more: removed;
/// - a missing thumbnail beside an existing photo and row: made again;
/// - photo files without a row (a crash after the files were stored,
///   before the row was committed; an upload whose store answered too
///   late): set aside (`.removed/` in the folder or the bucket);
/// - rows without a photo file (MyISAM, which cannot roll back, or a
///   PHP-era upload without a file): moved to the table `photos_removed`;
/// - rows whose original is gone (under both names) while sizes of it are
///   left in the tree: a photo that was whole and lost its original,
///   listed and never changed (only a backup brings it back; setting it
///   aside would lose what is left);
/// - comments, votes, counts and details of photos that no longer exist (a
///   `delete` cut short on the original MyISAM table, or a row deleted or
///   lost outside the API), and those of accounts that no longer exist:
///   counted, and removed only when `Actions` say so (`repair --yes`),
///   since only a database backup brings them back;
/// - in the photos' tree: sizes under another secret than the row's are
///   removed (made again when asked for), and, in the folder, a photo gets
///   its original in the tree (a hard link) and, as `legacy_photo_urls`
///   says, its 2012 names and thumbnail or not (the bucket keeps whichever
///   names each photo was stored under).
///
/// Setting files and rows aside is destructive (though restorable), taken
/// only when `Actions` say so and never when the damage looks like a wrong
/// path or bucket, a disk that is not mounted or the wrong database: then
/// the report's `refusal` says why and nothing at all is changed.
///
/// A consistent view while uploads commit: the rows are read before the
/// store is listed (a committed row had its files before its commit), and
/// whatever looks missing is looked at again, rows and files, before it is
/// called missing. Only files older than `graceSeconds` are touched.
public struct PhotoRepair {
    /// What a run may change.
    public struct Actions: Sendable {
        /// Remove old spool files, make missing thumbnails.
        public var safeSteps = true
        public var setAsideFiles = false
        public var setAsideRows = false
        /// Delete the comments, votes and the rest of photos and accounts
        /// whose row is gone: nothing brings them back but a database
        /// backup, and a row deleted outside the API (a one-table restore, a
        /// wrong DELETE) comes back whole only while they are kept.
        public var removeReactions = false
        /// Go on even when the damage looks like a wrong path.
        public var force = false

        public init(safeSteps: Bool = true, setAsideFiles: Bool = false, setAsideRows: Bool = false, removeReactions: Bool = false,
                    force: Bool = false) {
            (self.safeSteps, self.setAsideFiles, self.setAsideRows, self.removeReactions, self.force)
                = (safeSteps, setAsideFiles, setAsideRows, removeReactions, force)
        }

        /// `repair --yes`: every step.
        public static func all(force: Bool = false) -> Actions {
            Actions(setAsideFiles: true, setAsideRows: true, removeReactions: true, force: force)
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
        /// Of those, the ones whose original could not be made one of (no
        /// JPEG: a PNG or a broken file the PHP version stored).
        public var unmadeThumbnails: [Int64] = []
        public var filesWithoutRow: [String] = []
        /// Files without a row younger than the grace time: not judged (an
        /// upload may be committing; files just restored are as young).
        public var youngFilesWithoutRow = 0
        public var rowsWithoutPhoto: [Int64] = []
        /// Rows whose original is gone but sizes of it are left: listed, never changed.
        public var lostOriginals: [Int64] = []
        /// Sizes in the tree under another secret than their row's.
        public var staleSizes: [String] = []
        /// Photos whose names are not as `legacy_photo_urls` says: the
        /// original not in the tree, or the 2012 names there when they should
        /// not be (or missing when they should).
        public var misnamed: [Int64] = []
        /// Comments, votes, counts, details and search words of deleted photos, and
        /// comments, votes and notifications of deleted accounts.
        public var orphanReactions = 0
        /// The steps taken (the others were only found).
        public var applied: Set<Step> = []
        /// Why nothing was changed although something was found.
        public var refusal: String?

        public var isClean: Bool { hasNoDebris && orphanReactions == 0 }

        /// Nothing found but, perhaps, reactions of rows that are gone.
        public var hasNoDebris: Bool {
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
                   part(missingThumbnails.count, "missing thumbnails", .thumbnails, "made")
                       + (unmadeThumbnails.isEmpty ? "" : " but \(unmadeThumbnails.count) whose original is no JPEG"),
                   part(orphanReactions, "reactions of deleted photos or accounts", .reactions, "removed"),
                   part(filesWithoutRow.count, "files without a row", .files, "moved to \(PhotoRepair.removedFolder)/")
                       + (youngFilesWithoutRow == 0 ? "" : " and \(youngFilesWithoutRow) younger than the grace time (not judged)"),
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

    /// What to do about the reactions of rows that are gone, kept until an operator says.
    public static let keptReactionsAdvice = "comments, votes and the rest of photos or accounts whose row is gone are kept: "
        + "the row put back (a restore, an undone DELETE) finds them whole; `ireporter repair --yes` deletes them"

    /// Where files without a row go: a folder of the upload folder, a prefix of the bucket.
    static let removedFolder = ".removed"
    private static let batch = 10_000

    let store: any RepairablePhotoStore
    let photos: any PhotoStore
    let thumbnailer: Thumbnailer
    let maxImagePixels: Int
    /// What "old enough to be left behind" is measured against (files' ages).
    let wallClock: any WallClock

    init(files: any RepairablePhotoStore, photos: any PhotoStore, maxImagePixels: Int,
         maxDecodeBytes: Int = Configuration().maxDecodeMemoryMiB << 20, wallClock: any WallClock = RealtimeClock()) {
        store = files
        self.wallClock = wallClock
        self.photos = photos
        self.maxImagePixels = maxImagePixels
        thumbnailer = Thumbnailer(maxDecodeBytes: maxDecodeBytes, toleratesWarnings: true)
    }

    func run(graceSeconds: Int, actions: Actions, progress: TaskProgress? = nil) throws -> Report {
        var report = Report()
        let now = Int(wallClock.unixSeconds)
        func oldEnough(_ modified: Int?) -> Bool { modified.map { now - $0 >= graceSeconds } ?? false }
        func checkStop() throws {
            if progress?.stopRequested == true { throw Stopped(report: report) }
        }
        let render = { (original: String) in try? thumbnailer.thumbnail(ofFileAt: original, maxPixels: maxImagePixels).jpeg }

        // The rows first: any of them had its files before it was committed.
        let rows = try Self.allRows(photos, progress: progress, checkStop: checkStop)
        var files: [Int64: [StoredPhotoFile]] = [:]
        var listed = 0
        try store.forEachPhotoFile { file in
            listed += 1
            if listed % 10_000 == 0 { progress?.update("listing \(store.place)", done: listed) }
            files[file.kind.id, default: []].append(file)
        }
        progress?.finish("files listed", done: listed)
        try forEachDirectoryEntry(store.spoolDirectory) { name, _ in
            var info = stat()
            if name.hasPrefix(".spool-"), lstat("\(store.spoolDirectory)/\(name)", &info) == 0, oldEnough(Int(info.st_mtim.tv_sec)) {
                report.spools.append(name)
            }
        }
        report.spools.sort()
        let originals = Set(files.filter { $0.value.contains(where: \.kind.isOriginal) }.keys)
        let inTree = Set(files.filter { $0.value.contains(where: \.kind.isInTree) }.keys)
        report.rows = rows.count
        report.photoFiles = originals.count

        // A second look at everything that seems missing, rows and files both.
        let rowless = files.filter { !rows.contains($0.key) }.flatMap(\.value)
        let candidates = rowless.filter { oldEnough(store.modified($0)) }
        report.youngFilesWithoutRow = rowless.count - candidates.count
        let nowRows = try Self.existing(Array(Set(candidates.map(\.kind.id))), in: photos)
        let withoutRow = candidates.filter { !nowRows.contains($0.kind.id) }
        report.filesWithoutRow = withoutRow.map(\.path).sorted()
        let seemMissing = rows.subtracting(originals).sorted()
        let stillRows = try Self.existing(seemMissing, in: photos)
        let noOriginal = try seemMissing.filter { try stillRows.contains($0) && !store.hasOriginal(id: $0) }
        // Sizes of it in the tree: it was whole once (they are made from the
        // original), and lost its original since. (A thumbnail alone is what
        // an upload cut short leaves on MyISAM: the row and thumbnail go aside.)
        let partlyThere = Set(noOriginal.filter(inTree.contains))
        report.lostOriginals = noOriginal.filter(partlyThere.contains)
        report.rowsWithoutPhoto = noOriginal.filter { !partlyThere.contains($0) }
        if store.legacyNames {
            report.missingThumbnails = rows.intersection(originals).sorted().filter { id in
                let own = files[id] ?? []
                return !own.contains { $0.kind == .thumbnail(id: id) } && own.contains { $0.kind.isOriginal && oldEnough(store.modified($0)) }
            }
        }
        // The rows' secrets, for what is in the tree and what should be
        // (with the 2012 names on, a photo stored before the tree needs none:
        // its sizes link it in when first asked for).
        let named = rows.intersection(store.legacyNames ? inTree : inTree.union(originals)).sorted()
        let secrets = try Self.secrets(of: named, in: photos, checkStop: checkStop)
        for id in named {
            guard let secret = secrets[id] else { continue } // no migration 006: the 2012 names alone
            for file in files[id] ?? [] {
                if case .size(_, let other, let size) = file.kind, other != secret, size != .original, oldEnough(store.modified(file)) {
                    report.staleSizes.append(file.path)
                }
            }
            // (A lost original is no name to fix.)
            if !partlyThere.contains(id), store.isMisnamed(id: id, secret: secret) { report.misnamed.append(id) }
        }
        report.staleSizes.sort()
        report.orphanReactions = try photos.orphanedReactions(remove: false)

        // Deleting reactions is judged on every file without a row, however
        // young: a restore's files are as young as the copy.
        let removesReactions = actions.removeReactions && report.orphanReactions > 0
        if !report.filesWithoutRow.isEmpty || !report.rowsWithoutPhoto.isEmpty || removesReactions, !actions.force {
            let orphanPhotos = Set((removesReactions ? rowless : withoutRow).filter(\.kind.isOriginal).map(\.kind.id)).count
            if let reason = Self.suspicion(report, place: store.place, setting: store.placeSetting, orphanPhotos: orphanPhotos)
                ?? store.changeSinceHealthy() {
                report.refusal = reason
                return report
            }
        }
        if actions.safeSteps {
            store.prepare()
            for name in report.spools { unlink("\(store.spoolDirectory)/\(name)") }
            report.applied.insert(.spools)
            for (done, id) in report.missingThumbnails.enumerated() {
                try checkStop()
                progress?.update("making thumbnails", done: done, of: report.missingThumbnails.count)
                if try !store.makeThumbnail(id: id, render) { report.unmadeThumbnails.append(id) }
            }
            report.applied.insert(.thumbnails)
            for path in report.staleSizes { try store.remove(path) }
            report.applied.insert(.sizes)
            for (done, id) in report.misnamed.enumerated() {
                try checkStop()
                progress?.update("naming photos", done: done, of: report.misnamed.count)
                if let secret = secrets[id] { try store.relink(id: id, secret: secret, render) }
            }
            report.applied.insert(.names)
        }
        if actions.removeReactions {
            report.orphanReactions = try photos.orphanedReactions(remove: true)
            report.applied.insert(.reactions)
        }
        if actions.setAsideFiles {
            for path in report.filesWithoutRow { try store.setAside(path) }
            report.applied.insert(.files)
        }
        if actions.setAsideRows {
            for (done, id) in report.rowsWithoutPhoto.enumerated() {
                try checkStop()
                progress?.update("setting rows aside", done: done, of: report.rowsWithoutPhoto.count)
                try photos.setAside(id: id, reason: "no photo file in \(store.place)")
                if let thumbnail = try store.legacyThumbnail(id: id) { try store.setAside(thumbnail) }
            }
            report.applied.insert(.rows)
        }
        if actions.safeSteps || actions.setAsideFiles || actions.setAsideRows || actions.removeReactions { store.recordHealthy() }
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
}
