import CMariaDB
#if canImport(Glibc)
import Glibc
#endif

/// One connection to MariaDB, owned by one worker thread, with its prepared
/// statements cached (at most `statementCacheCapacity`: callers keep the
/// SQL texts few, a list of ids in one of a few fixed widths, `IDList`).
/// It reconnects by itself when the server went away.
public final class DatabaseConnection {
    public let settings: DatabaseSettings
    /// Asks the server for progress reports (`runLong`).
    private let reportsProgress: Bool
    private var handle: UnsafeMutablePointer<MYSQL>?
    private var statements: StatementCache<PreparedStatement>
    /// The Galera nodes this connection may use (nil: one server), and the
    /// one it is connected to.
    private var cluster: ClusterNodes?
    private var currentNode: Int?
    /// Inside `transaction`, between START TRANSACTION and COMMIT.
    private var inTransaction = false
    /// Tables found missing (`ifTableExists`), and when: at most the few
    /// that the code names.
    private var missingTables: [String: Instant] = [:]
    /// Time spent waiting on the server, for the access log.
    public private(set) var busyMicros: Int64 = 0
    /// Writes run so far (`ReplicaReads`: did a request write?).
    public private(set) var writes = 0

    /// Call once per process before any connection (Connector/C's global init).
    public static func initializeLibrary() { _ = cmariadb_library_init() }

    /// Prepared statements a connection keeps by default: more than the
    /// distinct statements a worker runs in the common requests, and small
    /// beside MariaDB's server-wide `max_prepared_stmt_count` (16,382 by
    /// default) times the connections of every worker.
    public static let defaultStatementCacheCapacity = 64

    /// How long a refused node is avoided, and the stores' checks of the
    /// schema now and then (`MariaDBUserStore`), are read on it.
    public let clock: any TimeSource

    /// `firstNode`: where in a cluster's `nodes` this connection starts
    /// looking (a worker's number, so that workers spread over the nodes).
    public init(settings: DatabaseSettings, reportsProgress: Bool = false, firstNode: Int = Int(getpid()),
                statementCacheCapacity: Int = DatabaseConnection.defaultStatementCacheCapacity,
                clock: any TimeSource = MonotonicClock()) {
        self.settings = settings
        self.clock = clock
        self.reportsProgress = reportsProgress
        statements = StatementCache(capacity: statementCacheCapacity)
        if !settings.nodes.isEmpty { cluster = ClusterNodes(settings.nodes, first: firstNode) }
    }

    /// The cluster node this connection is on (nil: none yet, or one server).
    public var node: DatabaseNode? { currentNode.map { cluster!.nodes[$0] } }

    deinit { disconnect() }

    /// Server-side prepared statements this connection holds now.
    public var preparedStatementCount: Int { statements.count }

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
        writes += 1
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
        // The killer must reach the node running the statement (thread ids are per node).
        var killerSettings = settings
        if let node { killerSettings.nodes = [node] }
        let settings = killerSettings
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

    /// How long a table found missing is taken as missing without asking
    /// again: a migration applied by hand under a running server is seen
    /// within this time (README, "Migrations").
    public static let missingTableRecheckMillis: Int64 = 1000

    /// `body`'s result, or nil when `table` does not exist: `body` was
    /// refused for a missing table, or it was less than
    /// `missingTableRecheckMillis` ago (then `body` does not run). For the
    /// statements a request goes on without on a schema that lacks a
    /// migration: on the PHP version's, each upload would otherwise send
    /// three statements that MariaDB refuses (a refused statement is not
    /// kept prepared).
    @discardableResult
    public func ifTableExists<T>(_ table: String, _ body: () throws -> T) throws -> T? {
        if let foundMissing = missingTables[table] {
            guard clock.now.millis(since: foundMissing) >= Self.missingTableRecheckMillis else { return nil }
            missingTables[table] = nil
        }
        do {
            return try body()
        } catch let error as DatabaseError where error.code == .noSuchTable {
            missingTables[table] = clock.now
            return nil
        }
    }

    /// Runs `body` in a transaction: rolled back when it throws (its error
    /// is rethrown as it was), committed when it returns. A failed COMMIT is
    /// thrown as `CommitError`: if the connection broke, the transaction may
    /// have been applied all the same, and only the caller knows how to ask.
    /// A statement inside it is never sent again on a new connection (it
    /// would run outside the transaction, which died with the old one).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try command("START TRANSACTION", repeatable: true)
        inTransaction = true
        defer { inTransaction = false }
        let result: T
        do {
            result = try body()
        } catch {
            inTransaction = false
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

    /// At most this many runs of a transaction in `retryingTransaction`.
    public static let transactionAttempts = 3

    /// `transaction`, run whole again (at most `transactionAttempts` times in
    /// all) when the server surely did not apply it and another run may
    /// succeed: it was rolled back to break a deadlock, or on a Galera
    /// cluster because a conflicting write on another node was certified
    /// first (error 1213, then also at COMMIT); or its connection broke
    /// before COMMIT (a node that went away: the next run connects to
    /// another). `canRetry` says whether a failed run left nothing outside
    /// the database that another run would trip on. The one place where
    /// transactions are retried.
    public func retryingTransaction<T>(canRetry: () -> Bool = { true }, _ body: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try transaction(body)
            } catch let error as DatabaseError where attempt < Self.transactionAttempts && canRetry()
                        && (error.code == .deadlock || error.isConnectionLost) {
                Log.info("transaction run again (\(attempt + 1) of \(Self.transactionAttempts)) after: \(error)")
            } catch let failure as CommitError where attempt < Self.transactionAttempts && canRetry()
                        && failure.underlying.code == .deadlock {
                Log.info("transaction run again (\(attempt + 1) of \(Self.transactionAttempts)) after a conflict at COMMIT: \(failure)")
            }
        }
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
                if let currentNode, let cluster {
                    // The operator's sign that a node went: the others take over without a word otherwise.
                    Log.warning("database node \(cluster.nodes[currentNode]) lost, going on with another: \(error)")
                    self.cluster?.avoid(currentNode, now: clock.now.millis)
                }
                disconnect()
                guard attempt == 1, !inTransaction, retryIf(error) else { throw error }
            }
        }
    }

    /// The cached statement for `sql`, prepared if not held. The least
    /// recently used is closed before a new one is prepared, so the server
    /// never holds more than the capacity for this connection. When the
    /// server holds its `max_prepared_stmt_count` already (other
    /// connections, other applications), this connection's statements are
    /// closed to make room and the statement is prepared once more.
    private func prepared(_ sql: String) throws(DatabaseError) -> PreparedStatement {
        if let statement = statements.statement(for: sql) { return statement }
        let connection = try connected()
        if statements.isFull { statements.removeLeastRecentlyUsed() }
        let statement: PreparedStatement
        do {
            statement = try PreparedStatement(connection: connection, sql: sql)
        } catch where error.code == .tooManyPreparedStatements && statements.count > 0 {
            Log.warning("database: the server's max_prepared_stmt_count is reached; closing this connection's "
                        + "\(statements.count) statements and preparing once more")
            statements.removeAll()
            statement = try PreparedStatement(connection: connection, sql: sql)
        }
        statements.insert(statement, for: sql)
        return statement
    }

    private func connected() throws(DatabaseError) -> UnsafeMutablePointer<MYSQL> {
        if let handle { return handle }
        handle = try cluster == nil ? open(node: nil) : openClusterNode()
        return handle!
    }

    /// A connection to the first node, in `cluster`'s order, that is ready
    /// for clients: in the primary component and Synced (not joining,
    /// donating or cut off). Each node refused is avoided for a while; the
    /// error of the last one is thrown when none will do.
    private func openClusterNode() throws(DatabaseError) -> UnsafeMutablePointer<MYSQL> {
        var lastError = DatabaseError(code: .nodeNotReady, message: "no database node configured")
        for index in cluster!.order(now: clock.now.millis) {
            let node = cluster!.nodes[index]
            do throws(DatabaseError) {
                let connection = try open(node: node)
                do throws(DatabaseError) {
                    try Self.checkReady(connection, node: node)
                    try run("SET SESSION wsrep_sync_wait = \(settings.syncWait)", on: connection)
                } catch {
                    mysql_close(connection)
                    throw error
                }
                cluster!.trust(index)
                currentNode = index
                return connection
            } catch {
                lastError = error
                Log.warning("database node \(node) refused, trying another: \(error)")
                cluster!.avoid(index, now: clock.now.millis)
            }
        }
        throw lastError
    }

    /// Throws `nodeNotReady` unless the node says it takes clients' writes
    /// and reads with the cluster's latest state.
    private static func checkReady(_ connection: UnsafeMutablePointer<MYSQL>, node: DatabaseNode) throws(DatabaseError) {
        let sql = "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state', 'wsrep_cluster_status')"
        let rows = try PreparedStatement(connection: connection, sql: sql).run([])
        var status: [String: String] = [:]
        for row in rows {
            status[String(decoding: row[0] ?? [], as: UTF8.self).lowercased()] = String(decoding: row[1] ?? [], as: UTF8.self)
        }
        // wsrep_local_state 4 is Synced.
        guard status["wsrep_ready"] == "ON", status["wsrep_cluster_status"] == "Primary", status["wsrep_local_state"] == "4" else {
            let message = status.isEmpty ? "node \(node) has no wsrep status: not a Galera node?"
                : "node \(node) is not ready: wsrep_ready \(status["wsrep_ready"] ?? "?"), cluster "
                    + "\(status["wsrep_cluster_status"] ?? "?"), wsrep_local_state \(status["wsrep_local_state"] ?? "?") (4 is Synced)"
            throw DatabaseError(code: .nodeNotReady, message: message)
        }
    }

    private func run(_ sql: String, on connection: UnsafeMutablePointer<MYSQL>) throws(DatabaseError) {
        guard sql.withCString({ mysql_real_query(connection, $0, UInt(strlen($0))) }) != 0 else { return }
        throw DatabaseError(connection: connection, sql: sql)
    }

    /// A new connection to `node`, or to the one server of the settings.
    private func open(node: DatabaseNode?) throws(DatabaseError) -> UnsafeMutablePointer<MYSQL> {
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
        // With an option file, NULLs let the file's values apply: to all when
        // there is no URL, else to the host, port and password it does not
        // name (its user and database, or their defaults, always apply; a
        // cluster node's host and port are always the node's).
        func given(_ part: DatabaseSettings.URLPart) -> Bool {
            settings.optionFile == nil || settings.partsInURL.contains(part)
                || (settings.fromURL && (part == .user || part == .database))
        }
        let host = node?.host ?? (given(.host) ? settings.host : nil)
        let port = node?.port ?? (given(.port) ? settings.port : 0)
        let socket = node == nil ? settings.socket : nil
        let ok = socket.withOptionalCString { socket in
            host.withOptionalCString { host in
                (given(.user) ? settings.user : nil).withOptionalCString { user in
                    (given(.password) ? settings.password : nil).withOptionalCString { password in
                        (given(.database) ? settings.database : nil).withOptionalCString { database in
                            mysql_real_connect(connection, host, user, password, database, port, socket, 0) != nil
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
        Self.dropWhenUnacknowledged(connection, afterSeconds: settings.connectTimeoutSeconds)
        return connection
    }

    /// A server cut off by the network (a cluster node, a replica, the one
    /// primary) acknowledges nothing, and a statement sent to it would hold
    /// the worker until the read timeout (or until the network heals). The
    /// kernel drops such a connection once sent data has waited this long
    /// for an acknowledgement (a busy server still acknowledges at once),
    /// so the statement fails as a lost connection: it runs again on
    /// another node, reads go to the primary, or the answer says so. TCP
    /// only: a Unix socket's peer is on this host.
    private static func dropWhenUnacknowledged(_ connection: UnsafeMutablePointer<MYSQL>, afterSeconds seconds: UInt32) {
        let fd = mysql_get_socket(connection)
        guard isTCPSocket(fd) else { return }
        var milliseconds = seconds * 1000
        if setsockopt(fd, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, &milliseconds, socklen_t(MemoryLayout<UInt32>.size)) != 0 {
            Log.warning("database: \(SystemError("setsockopt TCP_USER_TIMEOUT"))")
        }
    }

    /// The live connection's `TCP_USER_TIMEOUT` in milliseconds; nil
    /// without a TCP connection (none yet, or a Unix socket).
    var unacknowledgedDataTimeoutMillis: UInt32? {
        guard let handle else { return nil }
        var milliseconds: UInt32 = 0
        var length = socklen_t(MemoryLayout<UInt32>.size)
        let fd = mysql_get_socket(handle)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, &milliseconds, &length) == 0 else { return nil }
        return milliseconds
    }

    /// Drops the connection (and its statements); the next call reconnects.
    public func disconnect() {
        statements.removeAll()
        if let handle { mysql_close(handle) }
        handle = nil
        currentNode = nil
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
