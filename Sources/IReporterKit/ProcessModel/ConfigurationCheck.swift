#if canImport(Glibc)
import Glibc
#endif

/// `ireporter check`: what the configuration points at, tried as the server
/// would, one line per item; `--check-config` only reads the file. Each probe
/// is bounded by the configured connect timeouts.
struct ConfigurationCheck {
    enum Outcome: String { case ok = "ok  ", warning = "warn", failed = "FAIL" }

    struct Line {
        let outcome: Outcome
        let item: String
        let detail: String
        var text: String { "\(outcome.rawValue) \(item): \(detail)" }
    }

    let configuration: Configuration
    /// Where each line goes as soon as it is known (a slow probe shows which one it is).
    var say: (Line) -> Void = { TaskProgress.say($0.text) }

    init(_ configuration: Configuration) { self.configuration = configuration }

    /// Every probe; 1 when one failed.
    func run() -> Int32 {
        DatabaseConnection.initializeLibrary()
        var lines: [Line] = []
        func add(_ line: Line) {
            lines.append(line)
            say(line)
        }
        for warning in configuration.warnings { add(Line(outcome: .warning, item: "configuration", detail: warning)) }
        // The server opens its socket before it switches to `user`; the rest is tried as `user`.
        add(listenLine())
        if let line = switchToServerUser() { add(line) }
        add(databaseLine())
        for index in configuration.replicas.indices { add(replicaLine(index)) }
        add(folderLine("upload_dir", configuration.uploadDirectory))
        if let line = uploadContentsLine() { add(line) }
        add(folderLine("session_dir", configuration.sessionDirectory, sharedWithPHP: true))
        for (item, path) in [("log_file", configuration.logFile), ("access_log", configuration.accessLog)]
        where !path.isEmpty && path != "stderr" {
            add(logFileLine(item, path))
        }
        if let redis = configuration.redisSettings { add(Self.redisLine(redis)) }
        if let answer = configuration.streamAnswerFile(configuration.apiPolicy) {
            add(folderLine("stream_answer_file", answer.folder))
            if let redis = configuration.redisSettings { add(Self.listenersLine(redis)) }
        }
        if let s3 = configuration.s3Settings { add(Self.bucketLine(s3)) }
        let failed = lines.filter { $0.outcome == .failed }.map(\.item)
        guard failed.isEmpty else {
            Log.error("check failed: \(failed.joined(separator: ", "))")
            return IReporterCommandLine.failed
        }
        return IReporterCommandLine.succeeded
    }

    func listenLine() -> Line {
        guard !configuration.listen.isEmpty else {
            return Line(outcome: .warning, item: "listen",
                        detail: "empty: the server needs a listening socket handed over (systemd's ireporter.socket, "
                            + "spawn-fcgi, mod_fcgid) or runs as CGI, and refuses to start otherwise")
        }
        switch ListeningSocket.probe(configuration.listen) {
        case .usable(let detail): return Line(outcome: .ok, item: "listen", detail: detail)
        case .inUse(let detail): return Line(outcome: .warning, item: "listen", detail: detail)
        case .unusable(let detail): return Line(outcome: .failed, item: "listen", detail: detail)
        }
    }

    private func switchToServerUser() -> Line? {
        guard getuid() == 0 else { return nil }
        guard !configuration.user.isEmpty else {
            // A systemd unit's configuration has no `user`: root would find writable what the server cannot write.
            return Line(outcome: .warning, item: "user",
                        detail: "empty, and this runs as root: what follows is tried as root, who may write where the "
                            + "server's user cannot; run it as that user (runuser -u www-data -- ireporter check)")
        }
        do {
            try Server.dropPrivileges(to: configuration.user)
            return Line(outcome: .ok, item: "user", detail: "what follows is tried as \(configuration.user)")
        } catch {
            return Line(outcome: .failed, item: "user", detail: "\(error)")
        }
    }

    private static func place(_ settings: DatabaseSettings) -> String {
        if !settings.nodes.isEmpty { return "the cluster " + settings.nodes.map { "\($0.host):\($0.port)" }.joined(separator: ",") }
        if let socket = settings.socket { return socket }
        if !settings.fromURL, let file = settings.optionFile { return "the server of \(file)" }
        return "\(settings.host):\(settings.port)"
    }

    func databaseLine() -> Line {
        let settings = configuration.database
        let database = DatabaseConnection(settings: settings)
        defer { database.disconnect() }
        do {
            let who = try database.query("SELECT CURRENT_USER() AS who, DATABASE() AS name")
            let user = who.first?["who"].map { String(decoding: $0, as: UTF8.self) } ?? "?"
            let name = who.first?["name"].map { String(decoding: $0, as: UTF8.self) } ?? "?"
            let connected = "connected to \(Self.place(settings)) as \(user), database \(name)"
            let missing = try SchemaMigration.missingBaseTables(on: database)
            guard missing.isEmpty else {
                return Line(outcome: .failed, item: "database",
                            detail: "\(connected), but the tables \(missing.joined(separator: ", ")) are missing (sql/schema.sql)")
            }
            let pending = try SchemaMigration.all.filter { migration throws(DatabaseError) in
                try !migration.isApplied(on: database)
            }.map(\.name)
            if !settings.nodes.isEmpty {
                let others = try InnoDBConversion(database: database).tablesToConvert().map(\.name)
                guard others.isEmpty else {
                    return Line(outcome: .failed, item: "database",
                                detail: "\(connected); not InnoDB, so not replicated by Galera: \(others.joined(separator: ", ")) "
                                    + "(ireporter convert-innodb)")
                }
            }
            // The server serves without them (the PHP version's database as it is, a
            // unique index held back by duplicate usernames): said, not a failure.
            var notes: [String] = []
            if !pending.isEmpty { notes.append("migrations not applied: \(pending.joined(separator: ", ")) (ireporter migrate)") }
            if let text = try convertedText(database, charset: settings.charset) { notes.append(text) }
            guard notes.isEmpty else {
                return Line(outcome: .warning, item: "database", detail: "\(connected); \(notes.joined(separator: "; "))")
            }
            return Line(outcome: .ok, item: "database",
                        detail: "\(connected); schema and \(SchemaMigration.all.count) migrations applied")
        } catch {
            return Line(outcome: .failed, item: "database", detail: "\(Self.place(settings)): \(error)")
        }
    }

    /// Text stored by a PHP version that connected in the server's default
    /// character set (utf8mb4 on today's Debian) rather than latin1: MariaDB
    /// converted it into the latin1 columns, so `é` is the one byte E9,
    /// which read back raw is no UTF-8 (answered as null). Our text, through
    /// a latin1 connection, is always the UTF-8 bytes sent. Looked for in
    /// the newest titles and names; nil when none is so (or db_charset is
    /// not latin1). A value as long as its column whose end is a UTF-8
    /// character cut short is a PHP-era value cut to the column (MySQL's
    /// non-strict mode), not a conversion.
    private func convertedText(_ database: DatabaseConnection, charset: String) throws(DatabaseError) -> String? {
        guard charset.lowercased() == "latin1" else { return nil }
        let samples = try database.query("""
            (SELECT title AS text, CHARACTER_MAXIMUM_LENGTH AS width FROM
             (SELECT title FROM photos ORDER BY IdPhoto DESC LIMIT 10000) newest, information_schema.COLUMNS
             WHERE title <> CONVERT(title USING ascii) AND TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'photos'
             AND COLUMN_NAME = 'title' LIMIT 200)
            UNION ALL (SELECT username, CHARACTER_MAXIMUM_LENGTH FROM
             (SELECT username FROM login ORDER BY IdUser DESC LIMIT 10000) newest, information_schema.COLUMNS
             WHERE username <> CONVERT(username USING ascii) AND TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'login'
             AND COLUMN_NAME = 'username' LIMIT 200)
            """)
        let converted = samples.compactMap { row -> [UInt8]? in
            guard let text = row["text"], String(validating: text, as: UTF8.self) == nil else { return nil }
            let cutAtWidth = row.int64("width") == Int64(text.count) && StoredText.cutShort(text) != nil
            return cutAtWidth ? nil : text
        }
        guard !converted.isEmpty else { return nil }
        return "\(converted.count) of the newest titles and usernames are not UTF-8 as stored (a PHP version that connected "
            + "in the server's default character set stored them converted to latin1): if so, set db_charset = utf8mb4 "
            + "(docs/COMPATIBILITY.md, \"Text\")"
    }

    private func replicaLine(_ index: Int) -> Line {
        let settings = configuration.replicaSettings(index)
        let item = "db_replicas \(settings.host):\(settings.port)"
        let replica = DatabaseConnection(settings: settings)
        defer { replica.disconnect() }
        do {
            _ = try replica.query("SELECT 1")
            return Line(outcome: .ok, item: item, detail: "connected")
        } catch {
            return Line(outcome: .failed, item: item, detail: "\(error)")
        }
    }

    /// Exists, takes a file (one is made and removed), and is not writable
    /// by everyone. `sharedWithPHP`: a session folder may be PHP's own,
    /// root's and sticky (Debian's /var/lib/php/sessions, 1733), where the
    /// store trusts only its user's files: PHP writes there through the
    /// "others" bits, so `chmod o-w` would break it.
    func folderLine(_ item: String, _ path: String, sharedWithPHP: Bool = false) -> Line {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return Line(outcome: .failed, item: item,
                        detail: errno == ENOENT ? "\(path) does not exist" : "\(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { return Line(outcome: .failed, item: item, detail: "\(path) is not a folder") }
        var template = Array("\(path)/.ireporter-check-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else {
            return Line(outcome: .failed, item: item,
                        detail: "\(path) is not writable by uid \(geteuid()): \(String(cString: strerror(errno)))")
        }
        close(fd)
        unlink(template)
        let mode = String(info.st_mode & 0o7777, radix: 8)
        if sharedWithPHP && info.st_mode & S_ISVTX != 0 && info.st_uid != geteuid() {
            return Line(outcome: .ok, item: item, detail: "\(path) is writable by uid \(geteuid()), shared as PHP's session "
                        + "folder is (mode \(mode), sticky: only files of uid \(geteuid()) are read as sessions)")
        }
        if info.st_mode & S_IWOTH != 0 {
            return Line(outcome: .warning, item: item,
                        detail: "\(path) is writable, but by every user too (mode \(mode)): chmod o-w \(path)")
        }
        return Line(outcome: .ok, item: item, detail: "\(path) is writable by uid \(geteuid()) (mode \(mode))")
    }

    /// What in upload_dir the server changes besides the folder itself: the
    /// photos' tree (`photos/<a>/<b>/`, two levels) and `.removed/`, which it
    /// writes into, and the photo files, which it links into the tree (a
    /// hard link to another user's file is refused: fs.protected_hardlinks).
    /// A restore copied as root leaves them root's when only the top folder
    /// is given back: uploads, deletions and sizes there then fail while
    /// upload_dir's own line says ok. Nil when there is nothing yet.
    func uploadContentsLine() -> Line? {
        let top = configuration.uploadDirectory
        func isFolder(_ path: String) -> Bool {
            var info = stat()
            return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
        }
        func subfolders(_ path: String) -> [String] {
            var names: [String] = []
            try? forEachDirectoryEntry("\(top)/\(path)") { name, _ in
                if isFolder("\(top)/\(path)/\(name)") { names.append("\(path)/\(name)") }
            }
            return names.sorted()
        }
        var folders = [PhotoTree.folderName, PhotoRepair.removedFolder].filter { isFolder("\(top)/\($0)") }
        if folders.contains(PhotoTree.folderName) {
            let level1 = subfolders(PhotoTree.folderName)
            folders += level1 + level1.flatMap(subfolders)
        }
        // The first files listed (a restore made all of them someone's, or
        // none): a folder of millions is not read, nor stat'ed, at every
        // start (systemd's ExecStartPre). Root links any file: asked only
        // as the server's user.
        var files = 0
        var othersFiles: [String] = []
        if geteuid() != 0 {
            try? UploadFolder(directory: top).scanPhotoFiles { file in
                files += 1
                var info = stat()
                if lstat("\(top)/\(file.path)", &info) == 0, info.st_uid != geteuid() { othersFiles.append(file.path) }
                return files < Self.photoFilesLookedAt
            }
        }
        guard !folders.isEmpty || files > 0 else { return nil }
        let refused = folders.filter { access("\(top)/\($0)", W_OK | X_OK) != 0 }
        guard refused.isEmpty && othersFiles.isEmpty else {
            let owner = configuration.user.isEmpty ? "<the server's user>" : configuration.user
            func some(_ names: [String]) -> String { names.prefix(5).joined(separator: ", ") + (names.count > 5 ? ", …" : "") }
            let problems = (refused.isEmpty ? [] : ["\(refused.count) of the \(folders.count) folders are not writable by uid \(geteuid()): "
                                                    + some(refused)])
                + (othersFiles.isEmpty ? [] : ["\(othersFiles.count) of the \(files) photo files looked at are another user's: "
                                               + some(othersFiles.sorted())])
            return Line(outcome: .failed, item: "upload_dir's contents",
                        detail: "in \(top), " + problems.joined(separator: "; ")
                            + " (uploads, deletions and sizes there fail): chown -R \(owner) \(top)")
        }
        return Line(outcome: .ok, item: "upload_dir's contents",
                    detail: "the \(folders.count) folders (the photos' tree, .removed/)"
                        + (geteuid() == 0 ? "" : " and the \(files) photo files looked at") + " in \(top) are uid \(geteuid())'s")
    }

    /// Photo files whose owner `uploadContentsLine` looks at, at most.
    static let photoFilesLookedAt = 1000

    /// A log the server appends to, and makes again after a rotation
    /// (SIGUSR1) unless logrotate's `create` does: the server's own log
    /// unopenable keeps it from starting; after a rotation that cannot make
    /// the file, lines go on into the rotated one.
    /// Asked with access(2), as the server's user: nothing is opened or made.
    func logFileLine(_ item: String, _ path: String) -> Line {
        let folder = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard access(access(path, F_OK) == 0 ? path : folder, W_OK) == 0 else {
            return Line(outcome: .failed, item: item,
                        detail: "\(path) cannot be written by uid \(geteuid()): \(String(cString: strerror(errno)))")
        }
        guard access(folder, W_OK) == 0 else {
            return Line(outcome: .warning, item: item,
                        detail: "\(path) is writable, but its folder is not (uid \(geteuid())): after a rotation the file must be "
                            + "made by the rotation (logrotate's `create`), or the lines go on into the rotated one")
        }
        return Line(outcome: .ok, item: item, detail: "\(path) is writable by uid \(geteuid())")
    }

    static func redisLine(_ settings: RedisSettings) -> Line {
        let redis = RedisConnection(settings: settings)
        defer { redis.disconnect() }
        do {
            let reply = try redis.command("PING")
            guard reply == .status("PONG") else {
                return Line(outcome: .failed, item: "redis", detail: "\(settings.place) answered PING with \(reply)")
            }
            return Line(outcome: .ok, item: "redis", detail: "\(settings.place) answers PING")
        } catch {
            return Line(outcome: .failed, item: "redis", detail: "\(error)")
        }
    }

    /// How many hosts' answer refreshers listen for the stream's changes:
    /// each running server with `stream_answer_file` on this Redis is one.
    static func listenersLine(_ settings: RedisSettings) -> Line {
        let redis = RedisConnection(settings: settings)
        defer { redis.disconnect() }
        let channel = RedisStreamChanges.channel(settings)
        do {
            guard case .array(let reply) = try redis.command("PUBSUB", "NUMSUB", channel), reply.count == 2,
                  case .integer(let listeners) = reply[1] else {
                return Line(outcome: .failed, item: "stream answer listeners", detail: "PUBSUB NUMSUB answered otherwise")
            }
            guard listeners > 0 else {
                return Line(outcome: .warning, item: "stream answer listeners",
                            detail: "no host listens on \(channel) (no server running, or its answer refresher cannot "
                                + "subscribe: its log says why): no host keeps its stream answer file")
            }
            return Line(outcome: .ok, item: "stream answer listeners",
                        detail: "\(listeners) host(s) listen on \(channel); each change waits for every one of them")
        } catch {
            return Line(outcome: .failed, item: "stream answer listeners", detail: "\(error)")
        }
    }

    static func bucketLine(_ settings: S3Settings) -> Line {
        do {
            _ = try S3Client(settings: settings).list(prefix: "", limit: 1)
            return Line(outcome: .ok, item: "s3", detail: "\(settings.place) can be listed with the configured key")
        } catch {
            return Line(outcome: .failed, item: "s3", detail: "\(settings.place): \(error)")
        }
    }
}
