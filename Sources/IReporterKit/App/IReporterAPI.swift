/// The five commands of the original API (`index.php` + `api.php`), one
/// instance per worker thread.
public final class IReporterAPI {
    public struct Limits: Sendable {
        public var maxImagePixels: Int
        public var maxUploadBytes: Int

        public init(maxImagePixels: Int, maxUploadBytes: Int) {
            self.maxImagePixels = maxImagePixels
            self.maxUploadBytes = maxUploadBytes
        }
    }

    private let users: UserRepository
    private let photos: PhotoRepository
    private let sessions: SessionStore
    private let files: PhotoFiles
    private let thumbnailer: Thumbnailer
    private let limits: Limits
    private let database: DatabaseConnection
    /// Time the last request spent in the database and in image work.
    public private(set) var lastTimings = (databaseMicros: Int64(0), imageMicros: Int64(0))

    public init(database: DatabaseConnection, sessions: SessionStore, files: PhotoFiles, limits: Limits) {
        self.database = database
        users = UserRepository(database: database)
        photos = PhotoRepository(database: database)
        self.sessions = sessions
        self.files = files
        thumbnailer = Thumbnailer()
        self.limits = limits
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
        // The columns are varchar(45): the original let MySQL truncate the
        // name, which then could not log in. Refuse instead.
        guard username.count <= UserRepository.maxUsernameBytes,
              password.count <= UserRepository.maxPasswordBytes else {
            return .error(.registrationFailed)
        }
        let taken = try users.withRegistrationLock { () throws -> Bool in
            if try users.exists(username: username) { return true }
            try users.insert(username: username, password: password)
            return false
        }
        if taken { return .error(.usernameExists) }
        return try login(request)
    }

    private func login(_ request: APIRequest) throws -> APIResponse {
        let (username, password) = credentials(request.form)
        guard let row = try users.authenticate(username: username, password: password), let userID = row[0] else {
            return .error(.authorizationFailed)
        }
        // A fresh session id at every login: a planted id is never logged in.
        let session = try sessions.create([("IdUser", .string(userID))])
        if let old = request.sessionCookie, SessionStore.isWellFormed(old) {
            sessions.destroy(id: String(decoding: old, as: UTF8.self))
        }
        var json = PHPJSONWriter()
        json.raw("{\"result\":[{\"IdUser\":")
        json.string(userID)
        json.raw(",\"username\":")
        json.nullableString(row[1])
        json.raw("}]}")
        return APIResponse(body: json.bytes, setCookie: [sessionCookie(session.id, secure: request.isSecure)])
    }

    /// The original ran every SQL argument through urldecode() once more; an
    /// account it created is only found with the same decoding.
    private func credentials(_ form: FormData) -> ([UInt8], [UInt8]) {
        (PHPStrings.urlDecode(form.field("username") ?? []), PHPStrings.urlDecode(form.field("password") ?? []))
    }

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
        let thumbnail: [UInt8]
        let imageStarted = monotonicMicros()
        do {
            thumbnail = try thumbnailer.thumbnailJPEG(ofFileAt: spool, maxPixels: limits.maxImagePixels)
            lastTimings.imageMicros = monotonicMicros() - imageStarted
        } catch let error as JPEGImageError {
            lastTimings.imageMicros = monotonicMicros() - imageStarted
            if case .tooManyPixels = error { return .error(.photoTooManyPixels(limit: limits.maxImagePixels)) }
            guard error.isInvalidImage else {
                Log.error("thumbnail: \(error)")
                return .error(.uploadOnServerProblem)
            }
            return .error(.notAJPEG)
        }
        let title = Self.fittingTitle(request.form.field("title") ?? [])

        try photos.beginTransaction()
        let photoID: Int64
        do {
            photoID = try photos.insert(userID: userID, title: title)
        } catch {
            photos.rollback()
            throw error
        }
        do {
            try files.publish(photoSpool: spool, thumbnail: thumbnail, id: photoID)
            request.form.markConsumed(spool)
        } catch {
            Log.error("upload \(photoID): \(error)")
            try? photos.delete(id: photoID) // MyISAM ignores the rollback
            photos.rollback()
            return .error(.uploadOnServerProblem)
        }
        do {
            try photos.commit()
        } catch {
            files.remove(id: photoID)
            throw error
        }
        return APIResponse(body: Array(#"{"successful":1}"#.utf8))
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
        let rows: [Row]
        do {
            rows = id == 0 ? try photos.stream() : try photos.photo(id: id)
        } catch {
            if error.isConnectionLost { throw error }
            Log.error("stream: \(error)")
            return .error(.streamBroken)
        }
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
        return APIResponse(body: json.bytes)
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
