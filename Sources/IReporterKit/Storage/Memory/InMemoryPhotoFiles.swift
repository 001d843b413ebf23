#if canImport(Glibc)
import Glibc
#endif

/// Published photos kept in memory, for the App's unit tests. Spool files
/// still live on disk (the upload pipeline decodes and strips files), in a
/// private temporary folder that is removed with the store.
public final class InMemoryPhotoFiles: PhotoFileStore {
    public private(set) var photos: [Int64: (photo: [UInt8], thumbnail: [UInt8])] = [:]
    /// The file each photo was published from (a test tells the upload's own spool from a copy).
    public private(set) var publishedFrom: [Int64: String] = [:]
    public let spoolDirectory: String
    /// A test makes the next publish fail once the spool file is consumed,
    /// as a failed sync does after the photo was moved into place.
    public var failsNextPublish = false
    /// Run as the next publish begins (a test's step of another request meanwhile).
    public var beforeNextPublish: (() throws -> Void)?

    public init() throws(SystemError) {
        var template = Array("/tmp/ireporter-memory-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw SystemError("create a temporary folder")
        }
        spoolDirectory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        for (name, _) in (try? directoryEntries(spoolDirectory)) ?? [] { unlink("\(spoolDirectory)/\(name)") }
        rmdir(spoolDirectory)
    }

    public func makeSpool() throws(SystemError) -> SpoolFile { try SpoolFile(directory: spoolDirectory) }

    public func publish(photoSpool: String, thumbnail: [UInt8], id: Int64, secret: PhotoSecret?) throws(SystemError) {
        if let step = beforeNextPublish {
            beforeNextPublish = nil
            do { try step() } catch { throw SystemError("\(error)") }
        }
        guard let photo = readFile(photoSpool) else { throw SystemError("read \(photoSpool)") }
        unlink(photoSpool)
        if failsNextPublish {
            failsNextPublish = false
            throw SystemError("fsync \(photoSpool)", code: EIO)
        }
        photos[id] = (photo, thumbnail)
        publishedFrom[id] = photoSpool
    }

    public func remove(id: Int64, secret: PhotoSecret?) { photos[id] = nil }

    public func discard(id: Int64) throws(SystemError) { photos[id] = nil }

    public func original(id: Int64, secret: PhotoSecret?) -> [UInt8]? { photos[id]?.photo }

    /// The spool files not yet removed (a test checks that none is left).
    public var spoolFiles: [String] { ((try? directoryEntries(spoolDirectory)) ?? []).map(\.name) }
}
