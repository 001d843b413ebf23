#if canImport(Glibc)
import Glibc
#endif
@testable import IReporterKit
import TestSupport

/// The API of one worker on the real database, with scratch upload and
/// session directories (or the session store and counters given), driven
/// the way the FastCGI layer drives it.
final class APIHarness {
    let database: DatabaseConnection
    let uploads = ScratchDirectory("upload")
    let sessionFiles = ScratchDirectory("sessions")
    let api: IReporterAPI
    let sessions: any SessionStore
    /// Shared by the workers of one server, as the supervisor's shared memory is.
    let counters: any SharedCounters
    /// The caches', the database connection's and the default counters'
    /// clock: a test steps it (counters given bring their own).
    let clock: ManualClock
    /// The cookie jar of the one simulated phone.
    var cookie: [UInt8]?

    /// The phone's address, as the web server would report it.
    var address = "192.0.2.1"

    /// `migrated`: with migration 003's tables; `hashedPasswords`: with
    /// migration 001 (login.pass widened).
    init(schema: String = "schema.sql", migrated: Bool = true, hashedPasswords: Bool = false, uploadDirectory: String? = nil,
         policy: AppServices.Policy = fastHashing, sessions: (any SessionStore)? = nil,
         counters: (any SharedCounters)? = nil, photoFiles: (any PhotoFileStore)? = nil) throws {
        let clock = ManualClock()
        self.clock = clock
        database = DatabaseConnection(settings: try TestServices.settings(), clock: clock)
        try TestServices.resetTables(database, schema: schema, migrated: migrated)
        if hashedPasswords { try TestServices.runSQLFile(database, "migrations/001-widen-pass.sql") }
        self.sessions = sessions ?? SessionFiles(directory: sessionFiles.path, idleTimeout: 3600)
        self.counters = counters ?? SharedMemoryCounters(capacity: 1024, clock: clock)
        api = IReporterAPI(services: Self.services(database: database, sessions: self.sessions, counters: self.counters,
                                                   uploadDirectory: uploadDirectory ?? uploads.path, policy: policy,
                                                   photoFiles: photoFiles, clock: clock))
    }

    /// The stores of a worker, on MariaDB, the session files and the upload
    /// folder (or the photo store given); its caches read `clock`.
    static func services(database: DatabaseConnection, sessions: any SessionStore, counters: any SharedCounters,
                         uploadDirectory: String, policy: AppServices.Policy,
                         photoFiles: (any PhotoFileStore)? = nil, clock: any TimeSource = MonotonicClock()) -> AppServices {
        var services = AppServices(users: MariaDBUserStore(database: database), photos: MariaDBPhotoStore(database: database),
                                   photoFiles: photoFiles ?? UploadFolder(directory: uploadDirectory),
                                   comments: MariaDBCommentStore(database: database),
                                   votes: MariaDBVoteStore(database: database), follows: MariaDBFollowStore(database: database),
                                   notifications: MariaDBNotificationStore(database: database),
                                   search: MariaDBPhotoSearch(database: database),
                                   sessions: sessions, counters: counters, policy: policy)
        services.clock = clock
        return services
    }

    /// Another worker's API on the same database, folders and shared
    /// counters (its own caches, its own view of the `pass` column; its own
    /// connection unless one is given).
    func anotherWorker(policy: AppServices.Policy = fastHashing, database: DatabaseConnection? = nil) -> IReporterAPI {
        IReporterAPI(services: Self.services(database: database ?? self.database, sessions: sessions, counters: counters,
                                             uploadDirectory: uploads.path, policy: policy, clock: clock))
    }

    /// Sends a command (to this harness's API, or `through` another); keeps
    /// the session cookie like the app's cookie store.
    @discardableResult
    func send(_ fields: [(String, String)], file: [UInt8]? = nil, filename: String = "photo.jpg",
              through worker: IReporterAPI? = nil) throws -> APIResponse {
        var form = FormData()
        for (name, value) in fields { form.setField(Array(name.utf8), Array(value.utf8)) }
        if let file {
            let spool = try SpoolFile(directory: uploads.path)
            _ = file.withUnsafeBytes { spool.write($0) }
            _ = spool.close()
            form.addFile(Array("file".utf8), UploadedFile(filename: Array(filename.utf8), contentType: Array("image/jpeg".utf8),
                                                          spoolPath: spool.path, size: file.count))
        }
        // The API removes the spool file when it has answered, unless an upload moved it into place.
        let response = (worker ?? api).handle(APIRequest(parameters: form, sessionCookie: cookie, clientAddress: address))
        for header in response.setCookie {
            let value = header.split(separator: ";")[0].dropFirst("PHPSESSID=".count)
            cookie = value == "deleted" ? nil : Array(value.utf8)
        }
        return response
    }

    func body(_ fields: [(String, String)], file: [UInt8]? = nil, through worker: IReporterAPI? = nil) throws -> String {
        String(decoding: try send(fields, file: file, through: worker).body, as: UTF8.self)
    }

    /// OWASP's parameters cost ~40 ms a hash: the tests use a cheap setting.
    /// The tests also write rows behind the API's back, so no stream or search cache.
    static var fastHashing: AppServices.Policy {
        var policy = AppServices.Policy()
        policy.passwordHashing.memoryKiB = 64
        policy.passwordHashing.iterations = 1
        policy.streamCacheMillis = 0
        policy.searchCacheMillis = 0
        return policy
    }

    func rowCount(_ table: String) throws -> Int {
        Int(String(decoding: try database.query("SELECT COUNT(*) FROM \(table)")[0][0]!, as: UTF8.self))!
    }
}
