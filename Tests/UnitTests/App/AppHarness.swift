#if canImport(Glibc)
import Glibc
#endif
@testable import IReporterKit
import TestSupport

/// The API on the in-memory stores, driven as the gateway drives it: one
/// simulated phone with its cookie jar. No service is needed.
final class AppHarness {
    let services: AppServices
    let api: IReporterAPI
    let users: InMemoryUserStore
    let photos: InMemoryPhotoStore
    let search: InMemoryPhotoSearch
    let follows: InMemoryFollowStore
    let notifications: InMemoryNotificationStore
    let files: InMemoryPhotoFiles
    let sessions: InMemorySessionStore
    let counters: InMemoryCounters
    /// The Mastodon-compatible API's tokens (`mastodonToken`).
    let tokens = InMemoryAccessTokens()
    /// The counters' and the caches' clock: throttling and caching tests step it, never sleep.
    let clock = ManualClock()
    let scratch = ScratchDirectory("app-uploads")
    var cookie: [UInt8]?
    var address = "192.0.2.1"

    init(hashesPasswords: Bool = true, policy: AppServices.Policy = AppHarness.cheapPolicy, hashingGate: HashingGate? = nil,
         decodeGate: DecodeGate? = nil, sharedAnswers: SharedAnswerTable? = nil) throws {
        users = InMemoryUserStore(hashesPasswords: hashesPasswords)
        photos = InMemoryPhotoStore(users: users)
        search = InMemoryPhotoSearch(photos: photos)
        files = try InMemoryPhotoFiles()
        sessions = InMemorySessionStore()
        counters = InMemoryCounters(clock: clock)
        follows = InMemoryFollowStore(users: users, photos: photos)
        notifications = InMemoryNotificationStore(users: users, photos: photos)
        var services = AppServices(users: users, photos: photos, photoFiles: files, comments: photos, votes: photos,
                                   follows: follows, notifications: notifications, search: search,
                                   sessions: sessions, counters: counters, policy: policy, hashingGate: hashingGate,
                                   decodeGate: decodeGate)
        services.clock = clock
        services.accessTokens = tokens
        services.sharedAnswers = sharedAnswers
        self.services = services
        api = IReporterAPI(services: services)
    }

    /// Cheap Argon2 parameters: the rules are under test here, not the cost.
    /// The tests add photos behind the API's back: no search cache unless a test asks.
    static var cheapPolicy: AppServices.Policy {
        var policy = AppServices.Policy()
        policy.passwordHashing.memoryKiB = 64
        policy.passwordHashing.iterations = 1
        policy.searchCacheMillis = 0
        return policy
    }

    /// `through`: another worker's API over the same stores (its own caches).
    @discardableResult
    func send(_ fields: [(String, String)], file: [UInt8]? = nil, through worker: IReporterAPI? = nil,
              arrived: Instant? = nil) throws -> APIResponse {
        var form = FormData()
        for (name, value) in fields { form.setField(Array(name.utf8), Array(value.utf8)) }
        if let file {
            let path = scratch.write(".spool-\(fields.count)-\(file.count)", file)
            form.addFile(Array("file".utf8), UploadedFile(filename: Array("photo.jpg".utf8), contentType: Array("image/jpeg".utf8),
                                                          spoolPath: path, size: file.count))
        }
        var request = APIRequest(parameters: form, sessionCookie: cookie, clientAddress: address)
        request.arrived = arrived
        let response = (worker ?? api).handle(request)
        for path in form.spooledPaths { unlink(path) } // what the gateway does
        for header in response.setCookie {
            let value = header.split(separator: ";")[0].dropFirst("PHPSESSID=".count)
            cookie = value == "deleted" ? nil : Array(value.utf8)
        }
        return response
    }

    func body(_ fields: [(String, String)], file: [UInt8]? = nil, through worker: IReporterAPI? = nil) throws -> String {
        String(decoding: try send(fields, file: file, through: worker).body, as: UTF8.self)
    }
}
