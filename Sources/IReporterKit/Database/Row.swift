/// One result row: every column as the bytes MariaDB sends in text form
/// (what PHP's mysqli returns as strings), nil for NULL, read by column name
/// so that a query can change its column order without breaking its readers.
public struct Row: Sendable {
    let columns: ColumnNames
    /// The values in the query's column order.
    public let values: [[UInt8]?]

    /// The value at a position: for one-column queries (`SELECT COUNT(*)`).
    public subscript(_ position: Int) -> [UInt8]? { values[position] }

    /// The column's value; nil for NULL. A name the query does not select is
    /// a programming error.
    public subscript(_ column: String) -> [UInt8]? {
        guard let index = columns.index[column.lowercased()] else {
            preconditionFailure("no column \(column) in this result (\(columns.names))")
        }
        return values[index]
    }

    /// The column as a whole number (nil for NULL or text that is not one).
    public func int64(_ column: String) -> Int64? {
        self[column].flatMap { Int64(String(decoding: $0, as: UTF8.self)) }
    }
}

/// The names of a result's columns, made once per prepared statement and
/// shared by its rows; looked up without regard to case, as SQL does.
final class ColumnNames: Sendable {
    let names: [String]
    let index: [String: Int]

    init(_ names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() where index[name.lowercased()] == nil {
            index[name.lowercased()] = position
        }
        self.index = index
    }
}
