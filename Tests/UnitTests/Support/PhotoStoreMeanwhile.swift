@testable import IReporterKit

/// The in-memory photos, with something happening right after the rows were
/// read: another request's upload committing between two steps of a
/// long task (repair, an account's deletion).
final class PhotoStoreMeanwhile: PhotoStore {
    let rows: InMemoryPhotoStore
    /// After `ids(after:limit:)` answered (repair reads the rows so).
    var afterReadingIDs: (([Int64]) throws -> Void)?
    /// After `photoIDs(ofUser:before:limit:)` answered (an account's deletion reads its photos so).
    var afterReadingPhotoIDs: (([Int64]) throws -> Void)?
    /// Set: the first read of photos after the next `add` fails with it
    /// (the database gone right after an upload committed).
    var failsFirstReadAfterAdd: (any Error)?
    private var failsNextRead = false

    init(_ rows: InMemoryPhotoStore) { self.rows = rows }

    func ids(after id: Int64, limit: Int) throws -> [Int64] {
        let ids = try rows.ids(after: id, limit: limit)
        try afterReadingIDs?(ids)
        return ids
    }
    func photoIDs(ofUser userID: Int64, before: Int64, limit: Int) throws -> [Int64] {
        let ids = try rows.photoIDs(ofUser: userID, before: before, limit: limit)
        try afterReadingPhotoIDs?(ids)
        return ids
    }
    func existing(_ ids: [Int64]) throws -> Set<Int64> { try rows.existing(ids) }
    func setAside(id: Int64, reason: String) throws { try rows.setAside(id: id, reason: reason) }
    func newest(limit: Int) throws -> [PhotoRecord] { try rows.newest(limit: limit) }
    func photo(id: Int64) throws -> PhotoRecord? {
        try failIfArmed()
        return try rows.photo(id: id)
    }
    func photos(ids: Set<Int64>) throws -> [Int64: PhotoRecord] { try rows.photos(ids: ids) }
    func add(userID: Int64, title: [UInt8], details: PhotoDetails?, secret: PhotoSecret?,
             publish: (Int64, PhotoSecret?) throws -> Void, unpublish: (Int64) -> Void) throws -> Int64 {
        let id = try rows.add(userID: userID, title: title, details: details, secret: secret, publish: publish, unpublish: unpublish)
        failsNextRead = failsFirstReadAfterAdd != nil
        return id
    }
    func secret(of id: Int64) throws -> PhotoSecret? { try rows.secret(of: id) }
    func secrets(ids: Set<Int64>) throws -> [Int64: PhotoSecret] { try rows.secrets(ids: ids) }
    func details(ids: Set<Int64>) throws -> [Int64: PhotoDetails] { try rows.details(ids: ids) }
    func person(id: Int64) throws -> PersonRecord? { try rows.person(id: id) }
    func photos(in page: PageCursor, userID: Int64?) throws -> [PhotoRecord] { try rows.photos(in: page, userID: userID) }
    func photosWithExtras(in page: PageCursor, userID: Int64?,
                          viewer: Int64?) throws -> [(photo: PhotoRecord, extras: PhotoExtras)] {
        try failIfArmed()
        return try rows.photosWithExtras(in: page, userID: userID, viewer: viewer)
    }

    private func failIfArmed() throws {
        guard failsNextRead, let error = failsFirstReadAfterAdd else { return }
        failsNextRead = false
        failsFirstReadAfterAdd = nil
        throw error
    }
    func extras(of ids: [Int64], viewer: Int64?) throws -> [Int64: PhotoExtras] { try rows.extras(of: ids, viewer: viewer) }
    func deleteOwned(id: Int64, by userID: Int64) throws -> PhotoDeletion { try rows.deleteOwned(id: id, by: userID) }
    func orphanedReactions(remove: Bool) throws -> Int { try rows.orphanedReactions(remove: remove) }
    func forgetSetAside(ofUser userID: Int64) throws { try rows.forgetSetAside(ofUser: userID) }
}
