/// Where a photo and its thumbnail are kept once uploaded.
public protocol PhotoFileStore {
    /// A new temporary file on the store's own file system (publishing it
    /// is then a rename); the caller removes it unless it was published.
    func makeSpool() throws(SystemError) -> SpoolFile
    /// Makes the photo (a spool file, consumed) and its thumbnail visible
    /// under the photo's id (and, with a secret, in the photos' tree), durably.
    func publish(photoSpool: String, thumbnail: [UInt8], id: Int64, secret: PhotoSecret?) throws(SystemError)
    /// Removes a photo's files (a row that did not commit).
    func remove(id: Int64)
    /// Removes a deleted photo's files, every size of it, durably.
    func discard(id: Int64) throws(SystemError)
}
