/// A MariaDB / Connector/C error number with a name, so that code matches
/// on meaning (`error.code == .serverGoneAway`) rather than on numbers.
public struct DatabaseErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public var description: String { "\(rawValue)" }

    // Client (Connector/C) errors.
    /// CR_CONNECTION_ERROR: no connection through the socket.
    public static let connectionError = Self(rawValue: 2002)
    /// CR_CONN_HOST_ERROR: no connection to the host.
    public static let hostConnectionError = Self(rawValue: 2003)
    /// CR_UNKNOWN_HOST.
    public static let unknownHost = Self(rawValue: 2005)
    /// CR_SERVER_GONE_ERROR: the connection was closed before the statement was sent.
    public static let serverGoneAway = Self(rawValue: 2006)
    /// CR_OUT_OF_MEMORY.
    public static let clientOutOfMemory = Self(rawValue: 2008)
    /// CR_SERVER_LOST: the connection broke while waiting for the answer.
    public static let serverLost = Self(rawValue: 2013)
    /// CR_SSL_CONNECTION_ERROR.
    public static let tlsConnectionError = Self(rawValue: 2026)
    /// CR_SERVER_LOST_EXTENDED.
    public static let serverLostExtended = Self(rawValue: 2055)

    // Server errors.
    /// ER_SERVER_SHUTDOWN: the server is shutting down.
    public static let serverShutdown = Self(rawValue: 1053)
    /// ER_UNKNOWN_COM_ERROR, as a Galera node answers while it is not ready
    /// for clients (joining, or cut off from the primary component): the
    /// statement did not run.
    public static let nodeNotReady = Self(rawValue: 1047)
    /// ER_DUP_ENTRY: a unique index already holds the value.
    public static let duplicateKey = Self(rawValue: 1062)
    /// ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: text the column's character set
    /// cannot hold (an emoji into the latin1 columns through a utf8mb4
    /// connection, in strict mode).
    public static let textNotStorable = Self(rawValue: 1366)
    /// ER_NO_SUCH_TABLE: e.g. a migration not applied yet.
    public static let noSuchTable = Self(rawValue: 1146)
    /// ER_KEY_DOES_NOT_EXITS: a statement's FORCE INDEX names an index the
    /// table lacks (a migration that adds one not applied yet).
    public static let keyDoesNotExist = Self(rawValue: 1176)
    /// ER_LOCK_DEADLOCK: InnoDB rolled this transaction back to break a
    /// deadlock, or Galera because a conflicting write on another node was
    /// certified first (then at COMMIT too); it may run again.
    public static let deadlock = Self(rawValue: 1213)
    /// ER_LOCK_WAIT_TIMEOUT: a lock not granted in time, or on Galera a read
    /// whose `wsrep_sync_wait` could not catch up with the cluster in time.
    public static let lockWaitTimeout = Self(rawValue: 1205)
    /// ER_QUERY_INTERRUPTED: stopped by KILL QUERY (and undone).
    public static let queryInterrupted = Self(rawValue: 1317)
    /// ER_UNKNOWN_STMT_HANDLER: the prepared statement died with its connection.
    public static let unknownStatementHandler = Self(rawValue: 1243)
    /// ER_MAX_PREPARED_STMT_COUNT_REACHED: the server holds its
    /// `max_prepared_stmt_count` (counted over every connection).
    public static let tooManyPreparedStatements = Self(rawValue: 1461)
    /// ER_CONNECTION_KILLED.
    public static let connectionKilled = Self(rawValue: 1927)
    /// ER_CLIENT_INTERACTION_TIMEOUT: idle too long, the server closed it.
    public static let clientInteractionTimeout = Self(rawValue: 4031)
    /// Not a MariaDB code: a lock or step of ours that the server refused.
    public static let notGranted = Self(rawValue: 0)
}
