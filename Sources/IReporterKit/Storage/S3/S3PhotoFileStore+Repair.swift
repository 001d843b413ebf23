#if canImport(Glibc)
import Glibc
#endif

/// The bucket as `PhotoRepair` sees it: the objects under `upload/` and
/// `photos/`, their ages by the store's LastModified, objects set aside by
/// copying them under `.removed/` (restorable, out of every URL's reach).
/// Photos are not renamed for `legacy_photo_urls`: the bucket keeps
/// whichever names each photo was stored under.
extension S3PhotoFileStore: RepairablePhotoStore {
    var place: String { client.settings.place }
    var placeSetting: String { "s3_url" }

    func forEachPhotoFile(_ body: (StoredPhotoFile) -> Void) throws {
        for prefix in ["upload/", "\(PhotoTree.folderName)/"] {
            try client.forEachObject(prefix: prefix) { item in
                if let kind = Self.kind(ofKey: item.key) { body(StoredPhotoFile(path: item.key, kind: kind, listedModified: item.modified)) }
            }
        }
    }

    func modified(_ file: StoredPhotoFile) -> Int? { file.listedModified }

    func makeThumbnail(id: Int64, _ render: (String) -> [UInt8]?) throws -> Bool {
        guard let original = try client.get(Self.photoKey(id: id)),
              let thumbnail = (try? withLocalCopy(of: original, render)) ?? nil else { return false }
        try client.put(Self.thumbnailKey(id: id), thumbnail)
        return true
    }

    func legacyThumbnail(id: Int64) throws -> String? {
        try client.exists(Self.thumbnailKey(id: id)) ? Self.thumbnailKey(id: id) : nil
    }

    func remove(_ path: String) throws { try client.delete(path) }

    /// Copied under `.removed/`, then deleted.
    func setAside(_ path: String) throws {
        guard let bytes = try client.get(path) else { return }
        try client.put("\(PhotoRepair.removedFolder)/\(path)", bytes)
        try client.delete(path)
    }

    func isMisnamed(id: Int64, secret: PhotoSecret) -> Bool { false }
    func relink(id: Int64, secret: PhotoSecret, _ render: (String) -> [UInt8]?) {}
    func changeSinceHealthy() -> String? { nil }
    func prepare() {}
    func recordHealthy() {}
}
