#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The upload folder as `PhotoRepair` sees it: its 2012 names and the
/// photos' tree; files set aside into `.removed/`; its device recorded when
/// a run found it healthy, so that another disk mounted in its place is
/// refused; photos named as `legacy_photo_urls` says (`UploadFolder.legacyNames`:
/// off removes the 2012 names once the tree has the photo).
extension UploadFolder: RepairablePhotoStore {
    /// Records the folder's device when a run found it healthy.
    static let deviceMarker = ".ireporter-upload-dir"

    var place: String { directory }
    var placeSetting: String { "upload_dir" }

    func forEachPhotoFile(_ body: (StoredPhotoFile) -> Void) throws {
        try scanPhotoFiles { file in
            body(file)
            return true
        }
    }

    /// `forEachPhotoFile` while `body` returns true: the 2012 names, then the tree's.
    func scanPhotoFiles(while body: (StoredPhotoFile) -> Bool) throws(SystemError) {
        let finished = try scanDirectory(directory) { name, _ in
            guard let (id, isThumbnail) = Self.photoFile(name) else { return true }
            return body(StoredPhotoFile(path: name, kind: isThumbnail ? .thumbnail(id: id) : .photo(id: id)))
        }
        guard finished else { return }
        try tree.scanFiles { _, path in
            guard let file = PhotoTree.parse(fileName: path.split(separator: "/").last!) else { return true }
            return body(StoredPhotoFile(path: path, kind: .size(id: file.id, secret: file.secret, size: file.size)))
        }
    }

    func modified(_ file: StoredPhotoFile) -> Int? {
        var info = stat()
        return lstat("\(directory)/\(file.path)", &info) == 0 ? Int(info.st_mtim.tv_sec) : nil
    }

    func hasOriginal(id: Int64) -> Bool { anyOriginal(id: id) != nil }

    func makeThumbnail(id: Int64, _ render: (String) -> [UInt8]?) throws -> Bool {
        guard let original = anyOriginal(id: id), let thumbnail = render(original) else { return false }
        try publishThumbnail(thumbnail, id: id)
        return true
    }

    func legacyThumbnail(id: Int64) -> String? { access(thumbnailPath(id: id), F_OK) == 0 ? "\(id)-thumb.jpg" : nil }

    func remove(_ path: String) { unlink("\(directory)/\(path)") }

    /// Into `.removed/` (made private to the server's user), never over a
    /// file there; a file of the tree under its own name.
    func setAside(_ path: String) throws(SystemError) {
        let folder = "\(directory)/\(PhotoRepair.removedFolder)"
        if mkdir(folder, 0o700) == 0 {
            giveToFolderOwner(folder)
        } else if errno != EEXIST {
            throw SystemError("mkdir \(folder)")
        }
        // Never over a file there: uploads, the sweep and `repair` may set aside at once.
        let name = path.split(separator: "/").last!
        for copy in 1... {
            let target = copy == 1 ? "\(folder)/\(name)" : "\(folder)/\(name).\(copy)"
            if csystem_rename_noreplace("\(directory)/\(path)", target) == 0 { return }
            if errno != EEXIST { break }
        }
        throw SystemError("move \(path) to \(folder)")
    }

    func isMisnamed(id: Int64, secret: PhotoSecret) -> Bool {
        let inTree = access(tree.path(id: id, secret: secret, size: .original), F_OK) == 0
        let legacy = access(photoPath(id: id), F_OK) == 0
        return legacyNames ? !legacy : (legacy || !inTree)
    }

    /// Gives the photo its original in the tree and its 2012 names and
    /// thumbnail as `legacy_photo_urls` says; the 2012 names go only once
    /// the tree holds the photo.
    func relink(id: Int64, secret: PhotoSecret, _ render: (String) -> [UInt8]?) throws {
        let original = tree.path(id: id, secret: secret, size: .original)
        if !(try linkOriginalIntoTree(id: id, secret: secret)), let other = anyOriginal(id: id) {
            // Only under an older secret: the row's own name for it.
            try tree.makeFolder(of: id)
            guard link(other, original) == 0 || errno == EEXIST else { throw SystemError("link \(original)") }
        }
        guard access(original, F_OK) == 0 else { return }
        if legacyNames {
            if access(photoPath(id: id), F_OK) != 0, link(original, photoPath(id: id)) != 0, errno != EEXIST {
                throw SystemError("link \(photoPath(id: id))")
            }
            if access(thumbnailPath(id: id), F_OK) != 0, let thumbnail = render(original) {
                try publishThumbnail(thumbnail, id: id)
            }
        } else {
            unlink(photoPath(id: id))
            unlink(thumbnailPath(id: id))
        }
        try PhotoTree.sync(tree.folder(of: id))
        try PhotoTree.sync(directory)
    }

    func changeSinceHealthy() -> String? {
        guard let recorded = recordedDevice(), let device = device(), recorded != device else { return nil }
        return "\(directory) is on another device (\(device)) than when it was last found healthy (\(recorded)): another disk mounted there, or none?"
    }

    /// The tree's root, for Apache's ErrorDocument in it before any upload made it.
    func prepare() {
        if mkdir(tree.root, 0o755) == 0 {
            chmod(tree.root, 0o755)
            giveToFolderOwner(tree.root)
        }
    }

    func recordHealthy() {
        guard let device = device(), recordedDevice() != device else { return }
        let bytes = Array("\(device)\n".utf8)
        let fd = open("\(directory)/\(Self.deviceMarker)", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { return }
        _ = bytes.withUnsafeBytes { writeAll(fd, $0) }
        close(fd)
        giveToFolderOwner("\(directory)/\(Self.deviceMarker)")
    }

    private func device() -> UInt64? {
        var info = stat()
        return stat(directory, &info) == 0 ? UInt64(info.st_dev) : nil
    }

    private func recordedDevice() -> UInt64? {
        readFile("\(directory)/\(Self.deviceMarker)").flatMap { UInt64(String(decoding: $0, as: UTF8.self).trimmingSpaces) }
    }

    /// What a repair run as root makes stays the server's (the upload
    /// folder's owner): its sweep sets files aside into `.removed/` too.
    private func giveToFolderOwner(_ path: String) {
        var folder = stat()
        guard geteuid() == 0, stat(directory, &folder) == 0 else { return }
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
