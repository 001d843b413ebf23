#if canImport(Glibc)
import Glibc
#endif

/// The size route's view of the folder: sizes are files of the tree.
extension UploadFolder: PhotoSizeFiles {
    public func storedSize(_ size: PhotoSize, id: Int64, secret: PhotoSecret) -> [UInt8]? {
        readFile(tree.path(id: id, secret: secret, size: size))
    }

    public func storedSizeLength(_ size: PhotoSize, id: Int64, secret: PhotoSecret) -> Int? {
        var info = stat()
        guard stat(tree.path(id: id, secret: secret, size: size), &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    public func originalInTree(id: Int64, secret: PhotoSecret) throws -> [UInt8]? {
        guard try linkOriginalIntoTree(id: id, secret: secret) else { return nil }
        return storedSize(.original, id: id, secret: secret)
    }

    public func originalDimensions(id: Int64, secret: PhotoSecret?) -> (width: Int, height: Int)? {
        let paths = (secret.map { [tree.path(id: id, secret: $0, size: .original)] } ?? []) + [photoPath(id: id)]
        for path in paths {
            guard let header = try? Thumbnailer.readHeader(ofFileAt: path) else { continue }
            return (header.displayWidth, header.displayHeight)
        }
        return nil
    }

    public func original(id: Int64, secret: PhotoSecret?) -> [UInt8]? {
        secret.flatMap { storedSize(.original, id: id, secret: $0) } ?? readFile(photoPath(id: id))
    }

    public func withSource<Result>(for size: PhotoSize, id: Int64, secret: PhotoSecret,
                                   _ render: (String) throws -> Result) throws -> Result? {
        try source(for: size, id: id, secret: secret).map(render)
    }

    public func removeSize(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws(SystemError) {
        let path = tree.path(id: id, secret: secret, size: size)
        guard unlink(path) == 0 else {
            if errno == ENOENT { return }
            throw SystemError("remove \(path)")
        }
        try PhotoTree.sync(tree.folder(of: id))
    }
}
