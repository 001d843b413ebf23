import CMariaDB

/// An error from MariaDB Connector/C, with the library's own code, SQLSTATE
/// and message, and the statement that failed (without its arguments, which
/// may hold passwords).
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    public let code: DatabaseErrorCode
    public let sqlState: String
    public let message: String
    public var sql: String?

    public init(code: DatabaseErrorCode, sqlState: String = "HY000", message: String, sql: String? = nil) {
        self.code = code
        self.sqlState = sqlState
        self.message = message
        self.sql = sql
    }

    init(connection: UnsafeMutablePointer<MYSQL>, sql: String? = nil) {
        self.init(code: DatabaseErrorCode(rawValue: mysql_errno(connection)),
                  sqlState: String(cString: mysql_sqlstate(connection)),
                  message: String(cString: mysql_error(connection)), sql: sql)
        countInMetrics()
    }

    init(statement: UnsafeMutablePointer<MYSQL_STMT>, sql: String) {
        self.init(code: DatabaseErrorCode(rawValue: mysql_stmt_errno(statement)),
                  sqlState: String(cString: mysql_stmt_sqlstate(statement)),
                  message: String(cString: mysql_stmt_error(statement)), sql: sql)
        countInMetrics()
    }

    /// Every error the library reports is counted (the status page's
    /// `?openmetrics`), handled or not: a retried deadlock is one too.
    private func countInMetrics() {
        Metrics.count(isConnectionLost ? .databaseConnectionErrors : isTransient ? .databaseRetryableErrors : .databaseOtherErrors)
    }

    public var description: String {
        "MariaDB error \(code) (\(sqlState)): \(message)" + (sql.map { " in `\($0.prefix(200))`" } ?? "")
    }

    /// The connection is unusable (server restarted, network dropped, killed,
    /// never established): reconnecting may help.
    public var isConnectionLost: Bool {
        Self.connectionLostCodes.contains(code)
    }

    /// The statement lost to another one for a moment (a deadlock, a lock or
    /// a cluster's causal wait that timed out): the same request may succeed
    /// when sent again.
    public var isTransient: Bool {
        code == .deadlock || code == .lockWaitTimeout
    }

    /// The server surely did not run the statement (it never got it), so even
    /// a write can be sent again on a new connection.
    public var statementNotSent: Bool {
        Self.notSentCodes.contains(code)
    }

    private static let notSentCodes: Set<DatabaseErrorCode> = [
        .connectionError, .hostConnectionError, .unknownHost, .serverGoneAway, .unknownStatementHandler,
        .nodeNotReady,
    ]
    private static let connectionLostCodes: Set<DatabaseErrorCode> = notSentCodes.union([
        .serverLost, .tlsConnectionError, .serverLostExtended, .serverShutdown, .connectionKilled,
        .clientInteractionTimeout,
    ])
}

/// The COMMIT of a transaction failed: unlike a failure inside it, the
/// transaction may or may not have been applied when the connection broke
/// (`underlying.isConnectionLost`): only asking again tells.
public struct CommitError: Error, CustomStringConvertible, Sendable {
    public let underlying: DatabaseError
    public var description: String { "COMMIT failed: \(underlying)" }
}
