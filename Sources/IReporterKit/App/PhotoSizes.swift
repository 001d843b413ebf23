/// A photo's size asked for by its URL (`PhotoTree.parse(urlPath:)`) that
/// the web server did not find on disk: checked against the photo's secret,
/// rendered once from the best source, kept in the photo store (the tree,
/// or the bucket) to be served from then on. Nothing is decoded or written for a photo
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
    private let files: any PhotoSizeFiles
    private let renderer: PhotoSizeRenderer
    private let decodeGate: DecodeGate?
    private let policy: AppServices.Policy

    public init(photos: any PhotoStore, files: any PhotoSizeFiles, policy: AppServices.Policy, decodeGate: DecodeGate?) {
        self.photos = photos
        self.files = files
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
        do {
            // Rendered by another request since the web server looked.
            if let bytes = try files.storedSize(size, id: id, secret: secret) { return .found(bytes) }
            let rendered: [UInt8]?
            if size == .original {
                rendered = try files.originalInTree(id: id, secret: secret)
            } else {
                rendered = try files.withSource(for: size, id: id, secret: secret) { source in
                    try decodeGate.decoding(limit: policy.concurrentDecodes) {
                        try renderer.render(size, ofFileAt: source, maxPixels: policy.maxImagePixels).jpeg
                    }
                }
                if let rendered { try files.publishSize(rendered, id: id, secret: secret, size: size) }
            }
            guard let rendered else {
                Log.error("photo \(id) has a row but no file: `ireporter repair` settles it")
                return .failed
            }
            return .found(rendered)
        } catch {
            Log.error("size \(size.letter ?? "-") of photo \(id): \(error)")
            return .failed
        }
    }
}
