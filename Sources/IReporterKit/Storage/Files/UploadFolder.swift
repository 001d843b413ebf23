#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The upload folder: `<IdPhoto>.jpg` and `<IdPhoto>-thumb.jpg`, as the
/// original laid it out and as the web server serves it, and the photos'
/// tree (`PhotoTree`, `photos/`) where a new photo is also stored, as its
/// original size: one file under two names (a hard link), so the 2012 URLs
/// and a PHP version sharing the folder see it at no cost in space.
/// Without `legacyNames` (`legacy_photo_urls = off`) a new photo with a
/// secret is kept in the tree alone, without its 2012 names or thumbnail.
public struct UploadFolder: PhotoFileStore, Sendable {
    public let directory: String
    public let tree: PhotoTree
    public let legacyNames: Bool

    public init(directory: String, legacyNames: Bool = true) {
        self.directory = directory
        self.legacyNames = legacyNames
        tree = PhotoTree(uploadDirectory: directory)
    }

    public func makeSpool() throws(SystemError) -> SpoolFile { try SpoolFile(directory: spoolDirectory) }
    /// The folder itself: publishing a spool file is a rename.
    public var spoolDirectory: String { directory }

    public func photoPath(id: Int64) -> String { "\(directory)/\(id).jpg" }
    public func thumbnailPath(id: Int64) -> String { "\(directory)/\(id)-thumb.jpg" }

    /// Makes the photo and its thumbnail visible under their final names,
    /// durably: each file is on disk (fsync) before its rename, and the
    /// directory entries after them. The spool file is consumed. With a
    /// secret the photo goes into the tree first, then gets its 2012 name.
    /// A file found at a 2012 name is an earlier photo's (`placeNew`).
    public func publish(photoSpool: String, thumbnail: [UInt8], id: Int64, secret: PhotoSecret?) throws(SystemError) {
        let legacy = legacyNames || secret == nil
        // The thumbnail is written before either file is synced, so that
        // both go to disk together (`PhotoTree.sync`).
        let thumbnailSpool = legacy ? try writeReadableSpool(thumbnail, what: "thumbnail") : nil
        // What this upload put in place: all it takes away again if it fails.
        var placed: [String] = []
        do throws(SystemError) {
            try PhotoTree.sync([photoSpool] + (thumbnailSpool.map { [$0] } ?? []))
            if let thumbnailSpool { try placeNew(thumbnailSpool, at: thumbnailPath(id: id), id: id, placed: &placed) }
        } catch {
            if let thumbnailSpool { unlink(thumbnailSpool) }
            throw error
        }
        do throws(SystemError) {
            // Readable by the web server, as a file PHP moved into place was.
            chmod(photoSpool, 0o644)
            if let secret {
                try tree.makeFolder(of: id)
                let original = tree.path(id: id, secret: secret, size: .original)
                try Self.rename(photoSpool, to: original) // named by a new secret: no earlier photo's
                placed.append(original)
                if legacy { try placeNew(original, at: photoPath(id: id), id: id, placed: &placed, byLink: true) }
                try Self.syncFile(tree.folder(of: id))
            } else {
                try placeNew(photoSpool, at: photoPath(id: id), id: id, placed: &placed)
            }
            try Self.syncFile(directory)
        } catch {
            for path in placed { unlink(path) }
            throw error
        }
    }

    /// Puts `from` at `path` (a rename, or with `byLink` a second name),
    /// never over a file there: no row names one (the database just gave
    /// out the id), so it is an earlier photo's of the same id, whose row is
    /// gone (a database restored from a backup older than the folder, or its
    /// AUTO_INCREMENT lowered). That photo's files are set aside into
    /// `.removed/`, as `ireporter repair` sets debris aside, not replaced.
    private func placeNew(_ from: String, at path: String, id: Int64, placed: inout [String], byLink: Bool = false) throws(SystemError) {
        func attempt() -> Bool { (byLink ? link(from, path) : csystem_rename_noreplace(from, path)) == 0 }
        if !attempt() {
            guard errno == EEXIST else { throw SystemError("\(byLink ? "link" : "rename") to \(path)") }
            try setAsideEarlierPhoto(id: id, except: placed)
            guard attempt() else { throw SystemError("\(byLink ? "link" : "rename") to \(path)") }
        }
        placed.append(path)
    }

    /// Moves the files an earlier photo `id` left (its 2012 names, its
    /// sizes in the tree) into `.removed/`, but for those of this upload.
    /// Only plain files: anything else there is no photo, and stays.
    func setAsideEarlierPhoto(id: Int64, except ours: [String]) throws(SystemError) {
        let leaf = "\(PhotoTree.folderName)/\(PhotoTree.leaf(of: id))"
        let names = (["\(id).jpg", "\(id)-thumb.jpg"] + tree.files(of: id).map { "\(leaf)/\($0)" }).filter { name in
            var info = stat()
            return !ours.contains("\(directory)/\(name)") && lstat("\(directory)/\(name)", &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        }
        guard !names.isEmpty else { return }
        for name in names { try setAside(name) }
        try Self.syncFile("\(directory)/\(PhotoRepair.removedFolder)")
        if names.contains(where: { $0.hasPrefix(leaf) }) { try Self.syncFile(tree.folder(of: id)) }
        Log.warning("upload \(id): an earlier photo \(id), which no row names, was in the upload folder (\(names.joined(separator: ", "))): "
                    + "moved to \(PhotoRepair.removedFolder)/, not replaced. Was the database restored from a backup older than the folder? "
                    + "docs/RELIABILITY.md, \"Restoring from backups\"")
    }

    /// The file a size is best rendered from: the smallest larger size of
    /// the same kind (square or box) already in the tree, else the
    /// original (in the tree, or under its 2012 name: a photo stored before
    /// the tree, or by the PHP version). nil when there is no original.
    public func source(for size: PhotoSize, id: Int64, secret: PhotoSecret) -> String? {
        for candidate in size.renderSources {
            let path = tree.path(id: id, secret: secret, size: candidate)
            if access(path, R_OK) == 0 { return path }
        }
        return access(photoPath(id: id), R_OK) == 0 ? photoPath(id: id) : nil
    }

    /// The photo's original in the tree (under any secret), else under its 2012 name.
    public func anyOriginal(id: Int64) -> String? {
        if let name = tree.files(of: id).first(where: { PhotoTree.parse(fileName: $0)?.size == .original }) {
            return "\(tree.folder(of: id))/\(name)"
        }
        return access(photoPath(id: id), F_OK) == 0 ? photoPath(id: id) : nil
    }

    /// Gives a photo stored under its 2012 name alone its name in the tree
    /// (a hard link, durably); true once it has one.
    public func linkOriginalIntoTree(id: Int64, secret: PhotoSecret) throws(SystemError) -> Bool {
        let original = tree.path(id: id, secret: secret, size: .original)
        if access(original, F_OK) == 0 { return true }
        guard access(photoPath(id: id), F_OK) == 0 else { return false }
        try tree.makeFolder(of: id)
        guard link(photoPath(id: id), original) == 0 || errno == EEXIST else {
            if errno == ENOENT { return false } // removed meanwhile (a delete)
            throw SystemError("link \(original)")
        }
        try Self.syncFile(tree.folder(of: id))
        return true
    }

    /// Writes a rendered size into the tree durably: a private spool file,
    /// synced, renamed over the final name (two renders of the same size
    /// never write into one file; the last rename wins, whole), the folder
    /// synced.
    public func publishSize(_ jpeg: [UInt8], id: Int64, secret: PhotoSecret, size: PhotoSize) throws(SystemError) {
        try tree.makeFolder(of: id)
        try place(jpeg, at: tree.path(id: id, secret: secret, size: size), what: "a size")
        try Self.syncFile(tree.folder(of: id))
    }

    /// Writes a thumbnail alone (made again for an existing photo).
    public func publishThumbnail(_ thumbnail: [UInt8], id: Int64) throws(SystemError) {
        try placeThumbnail(thumbnail, id: id)
        try Self.syncFile(directory)
    }

    private func placeThumbnail(_ thumbnail: [UInt8], id: Int64) throws(SystemError) {
        try place(thumbnail, at: thumbnailPath(id: id), what: "thumbnail")
    }

    /// Writes `bytes` to a private spool file, syncs it and renames it over
    /// `path` (readers see the old file or the new one, whole); the folder's
    /// sync is the caller's.
    private func place(_ bytes: [UInt8], at path: String, what: String) throws(SystemError) {
        let spool = try writeReadableSpool(bytes, what: what)
        do throws(SystemError) {
            try Self.syncFile(spool)
            try Self.rename(spool, to: path)
        } catch {
            unlink(spool)
            throw error
        }
    }

    /// A new spool file holding `bytes`, readable by the web server, closed,
    /// not synced: its path.
    private func writeReadableSpool(_ bytes: [UInt8], what: String) throws(SystemError) -> String {
        let spool = try makeSpool()
        do throws(SystemError) {
            if let code = bytes.withUnsafeBytes({ spool.write($0) }) { throw SystemError("write \(what)", code: code) }
            if let code = spool.makeReadable() { throw SystemError("chmod \(spool.path)", code: code) }
            if let code = spool.close() { throw SystemError("close \(spool.path)", code: code) }
        } catch {
            spool.discard()
            throw error
        }
        return spool.path
    }

    public func remove(id: Int64, secret: PhotoSecret?) {
        unlink(photoPath(id: id))
        unlink(thumbnailPath(id: id))
        if let secret { unlink(tree.path(id: id, secret: secret, size: .original)) }
    }

    /// Removes a deleted photo's files, its sizes in the tree included, and
    /// syncs the folders, so that the deletion survives a crash as its row's did.
    public func discard(id: Int64) throws(SystemError) {
        for path in [photoPath(id: id), thumbnailPath(id: id)] where unlink(path) != 0 && errno != ENOENT {
            throw SystemError("remove \(path)")
        }
        try tree.discard(id: id)
        try Self.syncFile(directory)
    }

    private static func syncFile(_ path: String) throws(SystemError) {
        try PhotoTree.sync(path)
    }

    private static func rename(_ from: String, to: String) throws(SystemError) {
        guard Glibc.rename(from, to) == 0 else { throw SystemError("rename to \(to)") }
    }
}
