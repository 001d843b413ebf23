#if canImport(Glibc)
import Glibc
#endif

/// `UploadRepair`'s checks and steps for photos in a bucket:
/// - spool files of this host's `upload_dir` no request owns any more: removed;
/// - a missing thumbnail beside an existing photo and row: made again;
/// - objects without a row (an upload whose store answered too late, or
///   whose row did not commit): moved to `.removed/<key>` in the bucket;
/// - rows without a photo object: moved to the table `photos_removed`;
/// - rows whose original is gone but sizes of it are left: listed, never changed;
/// - reactions of photos that no longer exist: removed;
/// - sizes under another secret than the row's: removed.
/// The same consistent view while uploads commit: the rows are read before
/// the bucket is listed, whatever looks missing is asked again, and only
/// objects older than `graceSeconds` (by the store's LastModified) are
/// touched; the same refusals when the damage looks like a wrong bucket or
/// database. (Photos are not renamed for `legacy_photo_urls`: the bucket
/// keeps whichever names each photo was stored under.)
struct S3PhotoRepair: PhotoRepair {
    static let removedPrefix = ".removed/"

    let files: S3PhotoFileStore
    let photos: any PhotoStore
    let thumbnailer: Thumbnailer
    let maxImagePixels: Int

    init(files: S3PhotoFileStore, photos: any PhotoStore, maxImagePixels: Int, maxDecodeBytes: Int) {
        (self.files, self.photos, self.maxImagePixels) = (files, photos, maxImagePixels)
        thumbnailer = Thumbnailer(maxDecodeBytes: maxDecodeBytes)
    }

    func run(graceSeconds: Int, actions: UploadRepair.Actions, progress: TaskProgress?) throws -> UploadRepair.Report {
        var report = UploadRepair.Report()
        let now = Int(time(nil))
        func checkStop() throws {
            if progress?.stopRequested == true { throw UploadRepair.Stopped(report: report) }
        }
        try forEachDirectoryEntry(files.spoolDirectory) { name, _ in
            var info = stat()
            if name.hasPrefix(".spool-"), lstat("\(files.spoolDirectory)/\(name)", &info) == 0,
               now - Int(info.st_mtim.tv_sec) >= graceSeconds {
                report.spools.append(name)
            }
        }
        report.spools.sort()

        let rows = try UploadRepair.allRows(photos, progress: progress, checkStop: checkStop)
        var objects: [Int64: [(key: String, object: S3PhotoFileStore.Object, modified: Int)]] = [:]
        var listed = 0
        for prefix in ["upload/", "\(PhotoTree.folderName)/"] {
            try files.client.forEachObject(prefix: prefix) { item in
                listed += 1
                if listed % 10_000 == 0 { progress?.update("listing \(files.client.settings.place)", done: listed) }
                if let object = S3PhotoFileStore.Object(key: item.key) {
                    objects[object.id, default: []].append((item.key, object, item.modified))
                }
            }
        }
        progress?.finish("objects listed", done: listed)
        let originals = Set(objects.filter { $0.value.contains { $0.object.isOriginal } }.keys)
        report.rows = rows.count
        report.photoFiles = originals.count
        func oldEnough(_ modified: Int) -> Bool { now - modified >= graceSeconds }

        // A second look at everything that seems missing, rows and objects both.
        let candidates = objects.filter { !rows.contains($0.key) }.flatMap(\.value).filter { oldEnough($0.modified) }
        let nowRows = try UploadRepair.existing(Array(Set(candidates.map(\.object.id))), in: photos)
        report.filesWithoutRow = candidates.filter { !nowRows.contains($0.object.id) }.map(\.key).sorted()
        let seemMissing = rows.subtracting(originals).sorted()
        let stillRows = try UploadRepair.existing(seemMissing, in: photos)
        let noOriginal = try seemMissing.filter { id in
            guard stillRows.contains(id) else { return false }
            return try !files.hasOriginal(id: id)
        }
        // Sizes of it left: it was whole once, and lost its original since.
        let partlyThere = Set(noOriginal.filter { id in objects[id]?.contains { if case .size = $0.object { true } else { false } } == true })
        report.lostOriginals = noOriginal.filter(partlyThere.contains)
        report.rowsWithoutPhoto = noOriginal.filter { !partlyThere.contains($0) }
        if files.legacyNames {
            report.missingThumbnails = rows.intersection(originals).sorted().filter { id in
                let own = objects[id] ?? []
                return !own.contains { $0.object == .thumbnail(id: id) } && own.contains { $0.object.isOriginal && oldEnough($0.modified) }
            }
        }
        let inTree = rows.filter { id in objects[id]?.contains { if case .size = $0.object { true } else { false } } == true }
        let secrets = try UploadRepair.secrets(of: inTree.sorted(), in: photos, checkStop: checkStop)
        for id in inTree.sorted() {
            guard let secret = secrets[id] else { continue }
            for item in objects[id] ?? [] {
                if case .size(_, let other, let size) = item.object, other != secret, size != .original, oldEnough(item.modified) {
                    report.staleSizes.append(item.key)
                }
            }
        }
        report.staleSizes.sort()

        if !report.filesWithoutRow.isEmpty || !report.rowsWithoutPhoto.isEmpty, !actions.force {
            let orphanPhotos = Set(candidates.filter { $0.object.isOriginal && report.filesWithoutRow.contains($0.key) }
                .map(\.object.id)).count
            if let reason = UploadRepair.suspicion(report, place: files.client.settings.place, setting: "s3_url",
                                                   orphanPhotos: orphanPhotos) {
                report.refusal = reason
                return report
            }
        }
        if actions.safeSteps {
            for name in report.spools { unlink("\(files.spoolDirectory)/\(name)") }
            report.applied.insert(.spools)
            for (done, id) in report.missingThumbnails.enumerated() {
                try checkStop()
                progress?.update("making thumbnails", done: done, of: report.missingThumbnails.count)
                guard let original = try files.client.get(S3PhotoFileStore.photoKey(id: id)) else { continue }
                let thumbnail = try? files.withLocalCopy(of: original) { path in
                    try thumbnailer.thumbnail(ofFileAt: path, maxPixels: maxImagePixels).jpeg
                }
                if let thumbnail { try files.client.put(S3PhotoFileStore.thumbnailKey(id: id), thumbnail) }
            }
            report.applied.insert(.thumbnails)
            report.orphanReactions = try photos.removeOrphanedReactions()
            report.applied.insert(.reactions)
            for key in report.staleSizes { try files.client.delete(key) }
            report.applied.insert(.sizes)
            report.applied.insert(.names)
        }
        if actions.setAsideFiles {
            for key in report.filesWithoutRow { try setAside(key) }
            report.applied.insert(.files)
        }
        if actions.setAsideRows {
            for (done, id) in report.rowsWithoutPhoto.enumerated() {
                try checkStop()
                progress?.update("setting rows aside", done: done, of: report.rowsWithoutPhoto.count)
                try photos.setAside(id: id, reason: "no photo object in \(files.client.settings.place)")
                if try files.client.exists(S3PhotoFileStore.thumbnailKey(id: id)) { try setAside(S3PhotoFileStore.thumbnailKey(id: id)) }
            }
            report.applied.insert(.rows)
        }
        return report
    }

    /// Copied under `.removed/` (restorable, out of every URL's reach), then deleted.
    private func setAside(_ key: String) throws {
        guard let bytes = try files.client.get(key) else { return }
        try files.client.put(Self.removedPrefix + key, bytes)
        try files.client.delete(key)
    }
}
