#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// The photos' tree, `<upload_dir>/photos/`: every size of a photo as
/// `<IdPhoto>_<secret>[_<letter>].jpg` in the folder of its thousand,
/// `photos/<a>/<b>/` where `<a><b>` is its `server`, IdPhoto / 1000 written
/// with at least six digits and `<b>` its last three: a leaf holds the sizes
/// of at most 1,000 photos (12,000 files at most), a folder above it at most
/// 1,000 leaves, and 1,000 of those reach 10^9 photos. Consecutive uploads
/// share a leaf (one hot directory, then never written again but for sizes
/// and deletions). The URL is `/iReporter/photos/<server>/<name>`: the web
/// server splits `<server>` into the two folders.
public struct PhotoTree: Sendable {
    public static let folderName = "photos"
    /// Photos per leaf folder, and leaves per folder above them.
    static let fanOut: Int64 = 1000

    /// `<upload_dir>/photos`.
    public let root: String

    public init(uploadDirectory: String) { root = "\(uploadDirectory)/\(Self.folderName)" }

    /// The `server` of a photo's URLs (Flickr's name for it).
    public static func server(of id: Int64) -> String {
        let number = String(id / fanOut)
        return String(repeating: "0", count: max(0, 6 - number.count)) + number
    }

    /// The leaf folder of a photo's files.
    public func folder(of id: Int64) -> String { "\(root)/\(Self.leaf(of: id))" }

    /// The leaf's path below the root: `<a>/<b>`.
    public static func leaf(of id: Int64) -> String {
        let server = server(of: id)
        return "\(server.dropLast(3))/\(server.suffix(3))"
    }

    public static func fileName(id: Int64, secret: PhotoSecret, size: PhotoSize) -> String {
        "\(id)_\(secret)" + (size.letter.map { "_\($0)" } ?? "") + ".jpg"
    }

    public func path(id: Int64, secret: PhotoSecret, size: PhotoSize) -> String {
        "\(folder(of: id))/\(Self.fileName(id: id, secret: secret, size: size))"
    }

    /// A size's URL below the installation's root (`/iReporter/`).
    public static func urlPath(id: Int64, secret: PhotoSecret, size: PhotoSize) -> String {
        "photos/\(server(of: id))/\(fileName(id: id, secret: secret, size: size))"
    }

    /// Makes the photo's folders (0755: the web server reads them) as far
    /// as they are missing, each new one durably (its parent synced). Made
    /// by root (`ireporter repair`), each is given to the upload folder's
    /// owner: the server writes sizes and uploads into them later.
    public func makeFolder(of id: Int64) throws(SystemError) {
        let leaf = folder(of: id)
        let upper = String(leaf[..<leaf.lastIndex(of: "/")!])
        var uploadFolder = stat()
        let owner = geteuid() == 0 && stat(String(root[..<root.lastIndex(of: "/")!]), &uploadFolder) == 0
            ? (uploadFolder.st_uid, uploadFolder.st_gid) : nil
        for folder in [root, upper, leaf] {
            if mkdir(folder, 0o755) == 0 {
                chmod(folder, 0o755) // whatever the umask
                if let owner { chown(folder, owner.0, owner.1) }
                try Self.sync(String(folder[..<folder.lastIndex(of: "/")!]))
            } else if errno != EEXIST {
                throw SystemError("mkdir \(folder)")
            }
        }
    }

    /// The names of the photo's files in its folder (any secret, any size).
    public func files(of id: Int64) -> [String] {
        let prefix = "\(id)_"
        var names: [String] = []
        try? forEachDirectoryEntry(folder(of: id)) { name, _ in
            if name.hasPrefix(prefix), Self.parse(fileName: name)?.id == id { names.append(name) }
        }
        return names.sorted()
    }

    /// Each file of the tree's leaves with the photo it is of, by its path
    /// below the upload folder (`photos/<a>/<b>/<name>`).
    public func forEachFile(_ body: (Int64, String) -> Void) throws(SystemError) {
        try scanFiles { id, path in
            body(id, path)
            return true
        }
    }

    /// `forEachFile` while `body` returns true. Returns false when `body` stopped it.
    @discardableResult
    func scanFiles(while body: (Int64, String) -> Bool) throws(SystemError) -> Bool {
        guard access(root, F_OK) == 0 else { return true }
        for upper in try directoryEntries(root) where (upper.info.st_mode & S_IFMT) == S_IFDIR {
            for leaf in try directoryEntries("\(root)/\(upper.name)") where (leaf.info.st_mode & S_IFMT) == S_IFDIR {
                let folder = "\(Self.folderName)/\(upper.name)/\(leaf.name)"
                let finished = try scanDirectory("\(root)/\(upper.name)/\(leaf.name)") { name, _ in
                    guard let file = Self.parse(fileName: name) else { return true }
                    return body(file.id, "\(folder)/\(name)")
                }
                guard finished else { return false }
            }
        }
        return true
    }

    /// Removes every file of the photo, durably.
    public func discard(id: Int64) throws(SystemError) {
        let names = files(of: id)
        for name in names where unlink("\(folder(of: id))/\(name)") != 0 && errno != ENOENT {
            throw SystemError("remove \(folder(of: id))/\(name)")
        }
        if !names.isEmpty { try Self.sync(folder(of: id)) }
    }

    /// What a size's URL asks for: its path's last three segments must be
    /// exactly `photos/<server>/<IdPhoto>_<secret>[_<letter>].jpg`, the
    /// server the photo's own. Anything else (another spelling, `..`,
    /// percent escapes, a letter that is no size) is nil.
    public static func parse(urlPath path: Substring) -> (id: Int64, secret: PhotoSecret, size: PhotoSize)? {
        guard path.utf8.count <= 200 else { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 3, segments[segments.count - 3] == folderName,
              let file = parse(fileName: segments[segments.count - 1]),
              segments[segments.count - 2] == server(of: file.id) else { return nil }
        return file
    }

    /// Where Flickr's clients build a photo's URL from its `server`, `id`
    /// and `secret` (Flickr's "Photo Source URLs",
    /// `/<server>/<id>_<secret>[_<letter>].jpg` at a host's root): the server
    /// read as a number (the tutorial's `intValue`), so in any padding, as
    /// long as it is the photo's own.
    public static func parse(flickrPath path: Substring) -> (id: Int64, secret: PhotoSecret, size: PhotoSize)? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == 3, segments[0].isEmpty, (1...10).contains(segments[1].utf8.count),
              segments[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let server = Int64(segments[1]),
              let file = parse(fileName: segments[2]), server == file.id / fanOut else { return nil }
        return file
    }

    /// `<IdPhoto>_<secret>[_<letter>].jpg`, spelled as `fileName` spells it.
    public static func parse(fileName name: some StringProtocol) -> (id: Int64, secret: PhotoSecret, size: PhotoSize)? {
        guard name.hasSuffix(".jpg") else { return nil }
        let parts = name.dropLast(4).split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3,
              parts[0].utf8.count <= 10, parts[0].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let id = Int64(parts[0]), id > 0, String(id) == parts[0],
              let secret = PhotoSecret(parts[1]),
              let size = PhotoSize(letter: parts.count == 3 ? Substring(parts[2]) : nil) else { return nil }
        return (id, secret, size)
    }

    static func sync(_ path: String) throws(SystemError) {
        try sync([path])
    }

    /// Puts each file on disk (fsync), the writeback of all of them started
    /// first: on ext4 the first fsync's journal commit then takes the other
    /// files' blocks too, and their own fsyncs find nothing left to wait for
    /// (a thumbnail's 0.16 ms became 0.05 on an idle disk here).
    static func sync(_ paths: [String]) throws(SystemError) {
        var opened: [(path: String, fd: Int32)] = []
        defer { for file in opened { close(file.fd) } }
        for path in paths {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw SystemError("open \(path)") }
            opened.append((path, fd))
            if paths.count > 1 { _ = csystem_start_writeback(fd) } // a hint: its failure leaves the fsync to do it all
        }
        for file in opened where fsync(file.fd) != 0 { throw SystemError("fsync \(file.path)") }
    }
}
