/// The five commands of the original API (`index.php` + `api.php`), one
/// instance per worker process.
public final class IReporterAPI {
    /// Limits and defences (configuration keys in docs/CONFIGURATION.md).
    public struct Policy: Sendable {
        public var maxImagePixels = 50_000_000
        public var maxUploadBytes = 20 * 1024 * 1024
        /// Uploads per user per hour; 0 = no limit.
        public var uploadsPerHour = 120
        public var passwordHashing = PasswordHasher.Parameters()
        /// Argon2 hashes computed at once by all the workers sharing a
        /// `HashingGate` (each holds `passwordHashing.memoryKiB`).
        public var concurrentHashes = 2
        /// How long a rendered stream may be served while nothing changed
        /// through this server (see `StreamCache`); 0 = always query.
        public var streamCacheMillis: Int64 = 1000

        public init() {}
    }

    private let users: UserRepository
    private let photos: PhotoRepository
    private let sessions: SessionStore
    private let files: PhotoFiles
    private let thumbnailer = Thumbnailer()
    private let hasher: PasswordHasher
    private let limiter: RateLimiter
    private let throttle: LoginThrottle
    private let policy: Policy
    private let database: DatabaseConnection
    private let streamCache: StreamCache
    /// Whether `login.pass` is wide enough for a hash, checked now and then
    /// (the migration may run while we serve).
    private var passwordColumn: (fitsHashes: Bool, checkedAt: Int64)?
    /// Time the last request spent in the database and in image work.
    public private(set) var lastTimings = (databaseMicros: Int64(0), imageMicros: Int64(0))

    public init(database: DatabaseConnection, sessions: SessionStore, files: PhotoFiles, policy: Policy = Policy(),
                limiter: RateLimiter = RateLimiter(capacity: 1024),
                streamGeneration: StreamCache.Generation = StreamCache.Generation(),
                hashingGate: HashingGate? = nil) {
        self.database = database
        users = UserRepository(database: database)
        photos = PhotoRepository(database: database)
        self.sessions = sessions
        self.files = files
        self.policy = policy
        self.limiter = limiter
        hasher = PasswordHasher(parameters: policy.passwordHashing, gate: hashingGate,
                                concurrentHashes: policy.concurrentHashes)
        throttle = LoginThrottle(limiter: limiter)
        streamCache = StreamCache(generation: streamGeneration, maxAgeMillis: policy.streamCacheMillis)
    }

    public func handle(_ request: inout APIRequest) -> APIResponse {
        let databaseBefore = database.busyMicros
        lastTimings = (0, 0)
        defer { lastTimings.databaseMicros = database.busyMicros - databaseBefore }
        switch request.form.field("command").map({ String(decoding: $0, as: UTF8.self) }) {
        case "login": return respond { try login(request) }
        case "register": return respond { try register(request) }
        case "upload": return respond { try upload(&request) }
        case "logout": return logout(request)
        case "stream": return respond { try stream(request) }
        default: return .empty // the original's switch had no default: an empty answer
        }
    }

    /// Runs a command; a failure of the database or the disk becomes a
    /// clear JSON error (and a log line with the library's message).
    private func respond(_ command: () throws -> APIResponse) -> APIResponse {
        do {
            return try command()
        } catch let error as DatabaseError {
            Log.error("database: \(error)")
            return .error(.serviceUnavailable)
        } catch {
            Log.error("\(error)")
            return .error(.serviceUnavailable)
        }
    }

    // MARK: - register / login

    private func register(_ request: APIRequest) throws -> APIResponse {
        let (username, password) = credentials(request.form)
        if username.contains(where: Self.isControl) { return .error(.invalidUsername) }
        let hashing = try passwordColumnFitsHashes()
        // The columns are varchar(45): the original let MySQL truncate the
        // name, which then could not log in. Refuse instead.
        guard username.count <= UserRepository.maxUsernameBytes,
              password.count <= (hashing ? UserRepository.maxHashedPasswordBytes : UserRepository.maxPasswordBytes) else {
            return .error(.registrationFailed)
        }
        let stored = hashing ? hasher.hash(password) : password
        // nil: the value no longer fits `pass` (narrowed since we looked).
        let taken = try users.withRegistrationLock { () throws -> Bool? in
            if try users.exists(username: username) { return true }
            return try users.insert(username: username, password: stored) ? false : nil
        }
        guard let taken else {
            passwordColumn = nil
            return .error(.registrationFailed)
        }
        if taken { return .error(.usernameExists) }
        return try login(request)
    }

    private func login(_ request: APIRequest) throws -> APIResponse {
        let (username, password) = credentials(request.form)
        if let wait = throttle.wait(username: username, address: request.clientAddress) {
            return .error(.tooManyLoginAttempts(seconds: wait))
        }
        guard let (userID, storedName) = try authenticate(username: username, password: password) else {
            throttle.failed(username: username, address: request.clientAddress)
            return .error(.authorizationFailed)
        }
        throttle.succeeded(username: username, address: request.clientAddress)
        // A fresh session id at every login: a planted id is never logged in.
        let session = try sessions.create([("IdUser", .string(userID))])
        if let old = request.sessionCookie, SessionStore.isWellFormed(old) {
            sessions.destroy(id: String(decoding: old, as: UTF8.self))
        }
        var json = PHPJSONWriter()
        json.raw("{\"result\":[{\"IdUser\":")
        json.string(userID)
        json.raw(",\"username\":")
        json.nullableString(storedName)
        json.raw("}]}")
        return APIResponse(body: json.bytes, setCookie: [sessionCookie(session.id, secure: request.isSecure)])
    }

    /// The account's `IdUser` and stored name, if the password matches one
    /// of the accounts with this name (the name compared by the column's
    /// collation, as before). A legacy plain value, or a hash with old
    /// parameters, is replaced by a fresh hash on the way.
    private func authenticate(username: [UInt8], password: [UInt8]) throws -> ([UInt8], [UInt8]?)? {
        let candidates = try users.candidates(username: username)
        // Only where real accounts are checked by hash: before the migration a
        // wrong password costs a byte comparison, and so must a missing name.
        if candidates.isEmpty, try passwordColumnFitsHashes() { hasher.burnVerificationTime(password) }
        for row in candidates {
            guard let userID = row[0], let stored = row[2] else { continue }
            guard case .match(let upgrade) = hasher.verify(password, against: stored) else { continue }
            if upgrade, try passwordColumnFitsHashes(),
               try !users.replacePassword(userID: userID, old: stored, new: hasher.hash(password)) {
                passwordColumn = nil  // narrowed meanwhile, or changed by another login: look again
            }
            return (userID, row[1])
        }
        return nil
    }

    private func passwordColumnFitsHashes() throws -> Bool {
        let now = monotonicMillis()
        if let passwordColumn, now - passwordColumn.checkedAt < 60_000 { return passwordColumn.fitsHashes }
        let fits = try users.passwordColumnLength() >= UserRepository.hashColumnLength
        if !fits && passwordColumn == nil {
            Log.warning("login.pass is too narrow for password hashes: passwords stay stored as the app sends them "
                        + "until `ireporter migrate-passwords` has run (see README, \"Password storage\")")
        }
        passwordColumn = (fits, now)
        return fits
    }

    /// The original ran every SQL argument through urldecode() once more; an
    /// account it created is only found with the same decoding.
    private func credentials(_ form: FormData) -> ([UInt8], [UInt8]) {
        (PHPStrings.urlDecode(form.field("username") ?? []), PHPStrings.urlDecode(form.field("password") ?? []))
    }

    static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

    // MARK: - logout

    private func logout(_ request: APIRequest) -> APIResponse {
        guard let cookie = request.sessionCookie else { return .empty }
        if SessionStore.isWellFormed(cookie) { sessions.destroy(id: String(decoding: cookie, as: UTF8.self)) }
        return APIResponse(body: [], setCookie: [Self.expiredSessionCookie(secure: request.isSecure)])
    }

    // MARK: - upload

    private func upload(_ request: inout APIRequest) throws -> APIResponse {
        guard let cookie = request.sessionCookie, let session = try sessions.load(id: cookie),
              let userID = session["IdUser"]?.intValue, userID != 0 else {
            return .error(.authorizationRequired)
        }
        guard let file = request.form.file("file"), let spool = file.spoolPath else {
            return .error(.uploadMalfunction)
        }
        let rawTitle = request.form.field("title") ?? []
        if rawTitle.contains(where: Self.isControl) { return .error(.invalidTitle) }
        if policy.uploadsPerHour > 0,
           !limiter.allow("upload:\(userID)", limit: Int64(policy.uploadsPerHour), windowSeconds: 3600) {
            return .error(.tooManyUploads)
        }
        let imageStarted = monotonicMicros()
        let prepared = try preparePhoto(spool: spool, form: &request.form)
        lastTimings.imageMicros = monotonicMicros() - imageStarted
        let thumbnail: [UInt8], cleanPhoto: String
        switch prepared {
        case .success(let result): (thumbnail, cleanPhoto) = result
        case .failure(let error): return .error(error)
        }
        let title = Self.fittingTitle(rawTitle)

        try photos.beginTransaction()
        let photoID: Int64
        do {
            photoID = try photos.insert(userID: userID, title: title)
        } catch {
            photos.rollback()
            throw error
        }
        do {
            try files.publish(photoSpool: cleanPhoto, thumbnail: thumbnail, id: photoID)
            request.form.markConsumed(cleanPhoto)
        } catch {
            Log.error("upload \(photoID): \(error)")
            try? photos.delete(id: photoID) // MyISAM ignores the rollback
            photos.rollback()
            return .error(.uploadOnServerProblem)
        }
        do {
            try photos.commit()
        } catch where error.isConnectionLost {
            // The answer to COMMIT was lost, not necessarily the commit: ask
            // again, for a few seconds (a restarting server comes back).
            switch photos.existsOnceReachable(id: photoID, withinMillis: 5000) {
            case true?:
                Log.warning("upload \(photoID): the connection broke after COMMIT, which had been applied")
            case false?:
                files.remove(id: photoID)
                throw error
            case nil:
                // Unknowable now: the files stay. With no row they are debris
                // that the start-up sweep and `ireporter repair` remove; with
                // one, the photo is whole.
                Log.error("upload \(photoID): the database went away during COMMIT; files kept for repair to settle")
                throw error
            }
        } catch {
            files.remove(id: photoID)
            try? photos.delete(id: photoID) // a MyISAM row outlives the failed commit
            throw error
        }
        streamCache.invalidate()
        return APIResponse(body: Array(#"{"successful":1}"#.utf8))
    }

    /// Checks the upload by decoding it whole (the decode makes the
    /// thumbnail), then copies it without EXIF/XMP/IPTC/comments (GPS
    /// position, camera serial), keeping the orientation as a lone tag.
    /// Returns the thumbnail and the path of the clean copy.
    private func preparePhoto(spool: String, form: inout FormData) throws -> Result<([UInt8], String), APIError> {
        let thumbnail: JPEGThumbnail
        do {
            thumbnail = try thumbnailer.thumbnail(ofFileAt: spool, maxPixels: policy.maxImagePixels)
        } catch let error as JPEGImageError {
            if case .tooManyPixels = error { return .failure(.photoTooManyPixels(limit: policy.maxImagePixels)) }
            guard error.isInvalidImage else {
                Log.error("thumbnail: \(error)")
                return .failure(.uploadOnServerProblem)
            }
            return .failure(.notAJPEG)
        }
        let clean: SpoolFile
        do {
            clean = try SpoolFile(directory: files.directory)
        } catch {
            Log.error("upload: \(error)")
            return .failure(.uploadOnServerProblem)
        }
        _ = clean.close()
        form.addSpooledPath(clean.path)
        do {
            try JPEGMetadataStripper.strip(from: spool, to: clean.path, orientation: thumbnail.source.orientation)
        } catch .io(let message) {
            Log.error("stripping metadata: \(message)")
            return .failure(.uploadOnServerProblem)
        } catch {
            return .failure(.notAJPEG)
        }
        return .success((thumbnail.jpeg, clean.path))
    }

    /// Titles are stored as sent (no second urldecode: it turned `+` into a
    /// space), cut to the column's 100 bytes without splitting a UTF-8 character.
    static func fittingTitle(_ title: [UInt8]) -> [UInt8] {
        guard title.count > PhotoRepository.maxTitleBytes else { return title }
        var end = PhotoRepository.maxTitleBytes
        if String(validatingUTF8Bytes: title) != nil {
            while end > 0 && title[end] & 0xC0 == 0x80 { end -= 1 }
        }
        return Array(title[..<end])
    }

    // MARK: - stream

    private func stream(_ request: APIRequest) throws -> APIResponse {
        let id = PHPStrings.intCast(request.form.field("IdPhoto") ?? [])
        do {
            if id == 0 { return APIResponse(body: try streamCache.answer { Self.render(try photos.stream()) }) }
            return APIResponse(body: Self.render(try photos.photo(id: id)))
        } catch let error as DatabaseError where !error.isConnectionLost {
            Log.error("stream: \(error)")
            return .error(.streamBroken)
        }
    }

    /// `{"result":[{"IdPhoto":…,"title":…,"IdUser":…,"username":…},…]}`
    static func render(_ rows: [Row]) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 80 * rows.count + 16)
        json.raw("{\"result\":[")
        for (index, row) in rows.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"IdPhoto\":")
            json.nullableString(row[0])
            json.raw(",\"title\":")
            json.nullableString(row[1])
            json.raw(",\"IdUser\":")
            json.nullableString(row[2])
            json.raw(",\"username\":")
            json.nullableString(row[3])
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }

    // MARK: - cookies

    private func sessionCookie(_ id: String, secure: Bool) -> String {
        "PHPSESSID=\(id); path=/; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }

    static func expiredSessionCookie(secure: Bool) -> String {
        "PHPSESSID=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly; SameSite=Lax"
            + (secure ? "; Secure" : "")
    }
}

extension String {
    init?(validatingUTF8Bytes bytes: [UInt8]) {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: self = ""; return
            case .error: return nil
            }
        }
    }
}
