import CMariaDB
#if canImport(Glibc)
import Glibc
#endif

/// A parameter of a prepared statement.
public enum DatabaseValue: Sendable, Equatable {
    case int(Int64)
    case bytes([UInt8])
}

/// A server-side prepared statement; closed when released.
final class PreparedStatement {
    private let handle: UnsafeMutablePointer<MYSQL_STMT>
    let sql: String
    /// The result's column names (none for a statement without a result).
    private let columns: ColumnNames

    init(connection: UnsafeMutablePointer<MYSQL>, sql: String) throws(DatabaseError) {
        guard let handle = mysql_stmt_init(connection) else { throw DatabaseError(connection: connection, sql: sql) }
        self.handle = handle
        self.sql = sql
        let failed = sql.withCString { mysql_stmt_prepare(handle, $0, UInt(strlen($0))) } != 0
        if failed {
            let error = DatabaseError(statement: handle, sql: sql)
            mysql_stmt_close(handle)
            throw error
        }
        columns = ColumnNames(Self.columnNames(handle))
    }

    private static func columnNames(_ handle: UnsafeMutablePointer<MYSQL_STMT>) -> [String] {
        guard let metadata = mysql_stmt_result_metadata(handle) else { return [] }
        defer { mysql_free_result(metadata) }
        let count = Int(mysql_num_fields(metadata))
        guard let fields = mysql_fetch_fields(metadata) else { return [] }
        return (0..<count).map { String(cString: fields[$0].name) }
    }

    deinit { mysql_stmt_close(handle) }

    var insertID: UInt64 { mysql_stmt_insert_id(handle) }
    var affectedRows: UInt64 { mysql_stmt_affected_rows(handle) }

    /// Executes with the parameters and returns every row of the result (none
    /// for a statement without one).
    func run(_ parameters: [DatabaseValue]) throws(DatabaseError) -> [Row] {
        try bindAndExecute(parameters)
        return try fetchAll()
    }

    private func bindAndExecute(_ parameters: [DatabaseValue]) throws(DatabaseError) {
        guard !parameters.isEmpty else {
            if mysql_stmt_execute(handle) != 0 { throw DatabaseError(statement: handle, sql: sql) }
            return
        }
        // The bind array and what it points to must live until execute returns.
        let binds = UnsafeMutablePointer<MYSQL_BIND>.allocate(capacity: parameters.count)
        binds.initialize(repeating: MYSQL_BIND(), count: parameters.count)
        var storage: [UnsafeMutableRawPointer] = []
        defer {
            storage.forEach { $0.deallocate() }
            binds.deallocate()
        }
        for (index, parameter) in parameters.enumerated() {
            switch parameter {
            case .int(let value):
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
                buffer.storeBytes(of: value, as: Int64.self)
                storage.append(buffer)
                binds[index].buffer_type = MYSQL_TYPE_LONGLONG
                binds[index].buffer = buffer
            case .bytes(let bytes):
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
                bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(buffer), byteCount: $0.count) }
                storage.append(buffer)
                binds[index].buffer_type = MYSQL_TYPE_STRING
                binds[index].buffer = buffer
                binds[index].buffer_length = UInt(bytes.count)
                binds[index].length_value = UInt(bytes.count)
            }
        }
        if mysql_stmt_bind_param(handle, binds) != 0 { throw DatabaseError(statement: handle, sql: sql) }
        if mysql_stmt_execute(handle) != 0 { throw DatabaseError(statement: handle, sql: sql) }
    }

    private func fetchAll() throws(DatabaseError) -> [Row] {
        let columns = self.columns.names.count
        guard columns > 0 else { return [] }
        defer { mysql_stmt_free_result(handle) }

        let buffers = ResultBuffers(columns: columns)
        if mysql_stmt_bind_result(handle, buffers.binds) != 0 { throw DatabaseError(statement: handle, sql: sql) }
        var rows: [Row] = []
        while true {
            let status = mysql_stmt_fetch(handle)
            if status == MYSQL_NO_DATA { break }
            if status != 0 && status != MYSQL_DATA_TRUNCATED { throw DatabaseError(statement: handle, sql: sql) }
            var row: [[UInt8]?] = []
            row.reserveCapacity(columns)
            for column in 0..<columns {
                if buffers.isNull[column] != 0 { row.append(nil); continue }
                let length = Int(buffers.lengths[column])
                if length <= ResultBuffers.inlineCapacity {
                    row.append(Array(UnsafeRawBufferPointer(start: buffers.binds[column].buffer, count: length)))
                } else {
                    row.append(try fetchLong(column: column, length: length))
                }
            }
            rows.append(Row(columns: self.columns, values: row))
        }
        return rows
    }

    /// A value longer than the bound buffer, fetched again in full.
    private func fetchLong(column: Int, length: Int) throws(DatabaseError) -> [UInt8] {
        var value = [UInt8](repeating: 0, count: length)
        var fetched: UInt = 0
        let failed = value.withUnsafeMutableBytes { raw in
            var bind = MYSQL_BIND()
            bind.buffer_type = MYSQL_TYPE_STRING
            bind.buffer = raw.baseAddress
            bind.buffer_length = UInt(length)
            return withUnsafeMutablePointer(to: &fetched) { lengthPointer in
                bind.length = lengthPointer
                return mysql_stmt_fetch_column(handle, &bind, UInt32(column), 0) != 0
            }
        }
        if failed { throw DatabaseError(statement: handle, sql: sql) }
        return value
    }
}

/// Bound output buffers for one result set (stable addresses until fetched).
private final class ResultBuffers {
    static let inlineCapacity = 256
    let binds: UnsafeMutablePointer<MYSQL_BIND>
    let lengths: UnsafeMutablePointer<UInt>
    let isNull: UnsafeMutablePointer<my_bool>
    let errors: UnsafeMutablePointer<my_bool>
    let data: UnsafeMutableRawPointer
    let columns: Int

    init(columns: Int) {
        self.columns = columns
        binds = .allocate(capacity: max(columns, 1))
        binds.initialize(repeating: MYSQL_BIND(), count: max(columns, 1))
        lengths = .allocate(capacity: max(columns, 1))
        lengths.initialize(repeating: 0, count: max(columns, 1))
        isNull = .allocate(capacity: max(columns, 1))
        isNull.initialize(repeating: 0, count: max(columns, 1))
        errors = .allocate(capacity: max(columns, 1))
        errors.initialize(repeating: 0, count: max(columns, 1))
        data = .allocate(byteCount: max(columns, 1) * Self.inlineCapacity, alignment: 8)
        for column in 0..<columns {
            binds[column].buffer_type = MYSQL_TYPE_STRING
            binds[column].buffer = data + column * Self.inlineCapacity
            binds[column].buffer_length = UInt(Self.inlineCapacity)
            binds[column].length = lengths + column
            binds[column].is_null = isNull + column
            binds[column].error = errors + column
        }
    }

    deinit {
        binds.deallocate()
        lengths.deallocate()
        isNull.deallocate()
        errors.deallocate()
        data.deallocate()
    }
}
