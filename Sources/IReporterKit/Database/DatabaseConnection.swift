import CMariaDB
#if canImport(Glibc)
import Glibc
#endif

/// One connection to MariaDB, owned by one worker thread, with its prepared
/// statements cached. It reconnects by itself when the server went away.
public final class DatabaseConnection {
    public let settings: DatabaseSettings
    /// Asks the server for progress reports (`runLong`).
    private let reportsProgress: Bool
    private var handle: UnsafeMutablePointer<MYSQL>?
    private var statements: [String: PreparedStatement] = [:]
    /// Time spent waiting on the server, for the access log.
    public private(set) var busyMicros: Int64 = 0

    /// Call once per process before any connection (Connector/C's global init).
    public static func initializeLibrary() { _ = cmariadb_library_init() }

    public init(settings: DatabaseSettings, reportsProgress: Bool = false) {
        self.settings = settings
        self.reportsProgress = reportsProgress
    }

    deinit { disconnect() }

    /// The rows of a query. Sent once more on a new connection if the old one
    /// turns out to be dead (reads are always safe to repeat).
    public func query(_ sql: String, _ parameters: [DatabaseValue] = []) throws(DatabaseError) -> [Row] {
        try perform(sql, parameters, repeatable: true).rows
    }

    /// Runs a write; repeated on a new connection only if the server surely
    /// never received it.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [DatabaseValue] = []) throws(DatabaseError)
        -> (affectedRows: UInt64, insertID: UInt64) {
        let result = try perform(sql, parameters, repeatable: false)
        return (result.affectedRows, result.insertID)
    }

    /// Runs a statement that takes no parameters with the text protocol
    /// (transaction control). `repeatable`: sent once more on a new
    /// connection if the old one turns out to be dead (a `START TRANSACTION`;
    /// never a `COMMIT`, whose transaction died with its connection).
    public func command(_ sql: String, repeatable: Bool = false) throws(DatabaseError) {
        try reconnectingOnce(retryIf: { _ in repeatable }) { () throws(DatabaseError) in
            let connection = try connected()
            guard sql.withCString({ mysql_real_query(connection, $0, UInt(strlen($0))) }) != 0 else { return }
            throw DatabaseError(connection: connection, sql: sql)
        }
    }

    /// A long statement (a migration) with the text protocol, on a connection
    /// made with `reportsProgress`: MariaDB's progress reports go to
    /// `onReport` about once a second while it runs. When `onReport` answers
    /// false the statement is stopped (KILL QUERY, from a connection of its
    /// own): the server undoes it, and this throws its "interrupted" error.
    public func runLong(_ sql: String, onReport: @escaping (StatementProgress) -> Bool) throws(DatabaseError) {
        precondition(reportsProgress, "runLong needs a connection made with reportsProgress")
        try command("SET SESSION progress_report_time = 1", repeatable: true)
        let settings = settings
        var killed = false
        DatabaseConnection.progressHandler = { connection, report in
            guard !onReport(report), !killed else { return }
            killed = true
            let killer = DatabaseConnection(settings: settings)
            _ = try? killer.command("KILL QUERY \(mysql_thread_id(connection))")
            killer.disconnect()
        }
        defer { DatabaseConnection.progressHandler = nil }
        try command(sql)
    }

    /// The statement `runLong` runs: the C callback reaches it through here
    /// (one long statement at a time, on the main thread of a command-line
    /// process).
    nonisolated(unsafe) private static var progressHandler: ((UnsafeMutablePointer<MYSQL>, StatementProgress) -> Void)?

    private static let progressCallback: cmariadb_progress_callback = { connection, stage, stages, percent, info, length in
        guard let connection, let handler = progressHandler else { return }
        let text = info.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(length)), as: UTF8.self) } ?? ""
        handler(UnsafeMutablePointer(mutating: connection),
                StatementProgress(stage: Int(stage), stages: Int(stages), percent: percent, state: text))
    }

    /// Runs `body` in a transaction: rolled back when it throws (its error
    /// is rethrown as it was), committed when it returns. A failed COMMIT is
    /// thrown as `CommitError`: if the connection broke, the transaction may
    /// have been applied all the same, and only the caller knows how to ask.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try command("START TRANSACTION", repeatable: true)
        let result: T
        do {
            result = try body()
        } catch {
            try? command("ROLLBACK")
            throw error
        }
        do {
            try command("COMMIT")
        } catch {
            throw CommitError(underlying: error)
        }
        return result
    }

    private func perform(_ sql: String, _ parameters: [DatabaseValue], repeatable: Bool) throws(DatabaseError)
        -> (rows: [Row], affectedRows: UInt64, insertID: UInt64) {
        try reconnectingOnce(retryIf: { repeatable || $0.statementNotSent }) { () throws(DatabaseError) in
            let statement = try prepared(sql)
            let rows = try statement.run(parameters)
            return (rows, statement.affectedRows, statement.insertID)
        }
    }

    /// Runs `body`, timed for `busyMicros`. When the connection turns out to
    /// be dead it is dropped, and `body` runs once more on a new one if
    /// `retryIf` says the failed attempt is safe to repeat.
    private func reconnectingOnce<T>(retryIf: (DatabaseError) -> Bool,
                                     _ body: () throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        let started = monotonicMicros()
        defer { busyMicros += monotonicMicros() - started }
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try body()
            } catch {
                guard error.isConnectionLost else { throw error }
                disconnect()
                guard attempt == 1, retryIf(error) else { throw error }
            }
        }
    }

    private func prepared(_ sql: String) throws(DatabaseError) -> PreparedStatement {
        if let statement = statements[sql] { return statement }
        let statement = try PreparedStatement(connection: try connected(), sql: sql)
        statements[sql] = statement
        return statement
    }

    private func connected() throws(DatabaseError) -> UnsafeMutablePointer<MYSQL> {
        if let handle { return handle }
        guard let connection = mysql_init(nil) else {
            throw DatabaseError(code: .clientOutOfMemory, message: "MySQL client ran out of memory")
        }
        var connectTimeout = settings.connectTimeoutSeconds
        var ioTimeout = settings.readWriteTimeoutSeconds
        mysql_options(connection, MYSQL_OPT_CONNECT_TIMEOUT, &connectTimeout)
        mysql_options(connection, MYSQL_OPT_READ_TIMEOUT, &ioTimeout)
        mysql_options(connection, MYSQL_OPT_WRITE_TIMEOUT, &ioTimeout)
        settings.charset.withCString { _ = mysql_options(connection, MYSQL_SET_CHARSET_NAME, $0) }
        if reportsProgress { _ = cmariadb_report_progress(connection, Self.progressCallback) }
        if let file = settings.optionFile {
            file.withCString { _ = mysql_options(connection, MYSQL_READ_DEFAULT_FILE, $0) }
            settings.optionGroup.withCString { _ = mysql_options(connection, MYSQL_READ_DEFAULT_GROUP, $0) }
        }
        // With an option file and no URL, NULLs let the file's values apply.
        let given = settings.fromURL || settings.optionFile == nil
        let ok = (given ? settings.socket : nil).withOptionalCString { socket in
            (given ? settings.host : nil).withOptionalCString { host in
                (given ? settings.user : nil).withOptionalCString { user in
                    (given ? settings.password : nil).withOptionalCString { password in
                        (given ? settings.database : nil).withOptionalCString { database in
                            mysql_real_connect(connection, host, user, password, database, given ? settings.port : 0, socket, 0) != nil
                        }
                    }
                }
            }
        }
        guard ok else {
            let error = DatabaseError(connection: connection)
            mysql_close(connection)
            throw error
        }
        handle = connection
        return connection
    }

    /// Drops the connection (and its statements); the next call reconnects.
    public func disconnect() {
        statements.removeAll()
        if let handle { mysql_close(handle) }
        handle = nil
    }
}

extension Optional where Wrapped == String {
    func withOptionalCString<Result>(_ body: (UnsafePointer<CChar>?) -> Result) -> Result {
        switch self {
        case .some(let string): string.withCString { body($0) }
        case .none: body(nil)
        }
    }
}

/// One of MariaDB's progress reports on a long statement.
public struct StatementProgress: Sendable {
    /// Stage `stage` of `stages` (from 1), `percent` of it done.
    public var stage: Int
    public var stages: Int
    public var percent: Double
    /// What the server says it does (`copy to tmp table`).
    public var state: String
}
