/// A photo's size asked for by its URL (`PhotoTree.parse(urlPath:)`) that
/// the web server did not find on disk: checked against the photo's secret,
/// rendered once from the best source, written into the tree for the web
/// server to serve from then on. Nothing is decoded or written for a photo
/// that does not exist or a secret that is not the photo's.
public final class PhotoSizes {
    public enum Outcome {
        /// The size's bytes (now on disk too).
        case found([UInt8])
        /// No such photo, or not this secret: nothing was done.
        case notFound
        /// The photo's file is missing or cannot be decoded, or the disk failed (logged).
        case failed
    }

    private let photos: any PhotoStore
    private let folder: UploadFolder
    private let renderer: PhotoSizeRenderer
    private let decodeGate: DecodeGate?
    private let policy: AppServices.Policy

    public init(photos: any PhotoStore, folder: UploadFolder, policy: AppServices.Policy, decodeGate: DecodeGate?) {
        self.photos = photos
        self.folder = folder
        self.policy = policy
        self.decodeGate = decodeGate
        renderer = PhotoSizeRenderer(maxDecodeBytes: policy.maxDecodeBytes)
    }

    public func size(_ size: PhotoSize, id: Int64, secret: PhotoSecret) -> Outcome {
        do {
            guard try photos.secret(of: id) == secret else { return .notFound }
        } catch {
            Log.error("size of photo \(id): \(error)")
            return .failed
        }
        let target = folder.tree.path(id: id, secret: secret, size: size)
        // Rendered by another request since the web server looked.
        if let bytes = readFile(target) { return .found(bytes) }
        do {
            if size == .original {
                guard try folder.linkOriginalIntoTree(id: id, secret: secret), let bytes = readFile(target) else {
                    Log.error("photo \(id) has a row but no file: `ireporter repair` settles it")
                    return .failed
                }
                return .found(bytes)
            }
            guard let source = folder.source(for: size, id: id, secret: secret) else {
                Log.error("photo \(id) has a row but no file: `ireporter repair` settles it")
                return .failed
            }
            let rendered = try decodeGate.decoding(limit: policy.concurrentDecodes) {
                try renderer.render(size, ofFileAt: source, maxPixels: policy.maxImagePixels)
            }
            try folder.publishSize(rendered.jpeg, id: id, secret: secret, size: size)
            return .found(rendered.jpeg)
        } catch {
            Log.error("size \(size.letter ?? "-") of photo \(id): \(error)")
            return .failed
        }
    }
}
