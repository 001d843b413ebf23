#if canImport(Glibc)
import Glibc
#endif
@testable import IReporterKit
import TestSupport

/// The API of one worker on the real database, with scratch upload and
/// session directories, driven the way the FastCGI layer drives it.
final class APIHarness {
    let database: DatabaseConnection
    let uploads = ScratchDirectory("upload")
    let sessionFiles = ScratchDirectory("sessions")
    let api: IReporterAPI
    let sessions: SessionStore
    /// The cookie jar of the one simulated phone.
    var cookie: [UInt8]?

    /// The phone's address, as the web server would report it.
    var address = "192.0.2.1"

    /// `hashedPasswords`: with sql/migrations applied (login.pass widened).
    init(schema: String = "schema.sql", hashedPasswords: Bool = false, uploadDirectory: String? = nil,
         policy: IReporterAPI.Policy = fastHashing) throws {
        database = DatabaseConnection(settings: try TestServices.settings())
        try TestServices.resetTables(database, schema: schema)
        if hashedPasswords { try TestServices.runSQLFile(database, "migrations/001-widen-pass.sql") }
        sessions = SessionStore(directory: sessionFiles.path, idleTimeout: 3600)
        api = IReporterAPI(database: database, sessions: sessions,
                           files: PhotoFiles(directory: uploadDirectory ?? uploads.path),
                           policy: policy)
    }

    /// Another worker's API on the same database and folders (its own
    /// caches, its own view of the `pass` column).
    func anotherWorker(policy: IReporterAPI.Policy = fastHashing) -> IReporterAPI {
        IReporterAPI(database: database, sessions: sessions, files: PhotoFiles(directory: uploads.path), policy: policy)
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
        var request = APIRequest(form: form, sessionCookie: cookie, clientAddress: address)
        let response = (worker ?? api).handle(&request)
        for path in request.form.spooledPaths { unlink(path) } // what APIResponder does
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
    /// The tests also write rows behind the API's back, so no stream cache.
    static var fastHashing: IReporterAPI.Policy {
        var policy = IReporterAPI.Policy()
        policy.passwordHashing.memoryKiB = 64
        policy.passwordHashing.iterations = 1
        policy.streamCacheMillis = 0
        return policy
    }

    func rowCount(_ table: String) throws -> Int {
        Int(String(decoding: try database.query("SELECT COUNT(*) FROM \(table)")[0][0]!, as: UTF8.self))!
    }
}
