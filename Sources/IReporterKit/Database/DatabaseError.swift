import CMariaDB

/// An error from MariaDB Connector/C, with the library's own code, SQLSTATE
/// and message.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    public let code: UInt32
    public let sqlState: String
    public let message: String

    public init(code: UInt32, sqlState: String = "HY000", message: String) {
        self.code = code
        self.sqlState = sqlState
        self.message = message
    }

    init(connection: UnsafeMutablePointer<MYSQL>) {
        self.init(code: mysql_errno(connection), sqlState: String(cString: mysql_sqlstate(connection)),
                  message: String(cString: mysql_error(connection)))
    }

    init(statement: UnsafeMutablePointer<MYSQL_STMT>) {
        self.init(code: mysql_stmt_errno(statement), sqlState: String(cString: mysql_stmt_sqlstate(statement)),
                  message: String(cString: mysql_stmt_error(statement)))
    }

    public var description: String { "MariaDB error \(code) (\(sqlState)): \(message)" }

    /// The connection is unusable (server restarted, network dropped, killed,
    /// never established): reconnecting may help.
    public var isConnectionLost: Bool {
        [2002, 2003, 2005, 2006, 2013, 2026, 2055, 1053, 1927, 4031, 1243].contains(code)
    }

    /// The server surely did not run the statement (it never got it), so even
    /// a write can be sent again on a new connection.
    public var statementNotSent: Bool {
        [2002, 2003, 2005, 2006, 1243].contains(code)
    }
}
