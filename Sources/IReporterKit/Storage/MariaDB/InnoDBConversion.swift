/// `ireporter convert-innodb`: the tables of the PHP version's schema
/// (sql/original-myisam.sql) from MyISAM to InnoDB, as sql/schema.sql has
/// them: crash-safe, row locks, and the only engine a Galera cluster
/// replicates. Columns, indexes and AUTO_INCREMENT are kept; each table is
/// rebuilt by one `ALTER TABLE … ENGINE=InnoDB`, which the server undoes
/// whole if it is stopped.
struct InnoDBConversion {
    struct Table: Equatable {
        var name: String
        /// The server's estimate (exact for MyISAM).
        var rows: Int64
    }

    let database: DatabaseConnection

    /// This database's tables that are not InnoDB yet (views aside).
    func tablesToConvert() throws(DatabaseError) -> [Table] {
        try database.query("""
            SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() \
            AND TABLE_TYPE = 'BASE TABLE' AND ENGINE <> 'InnoDB' ORDER BY TABLE_NAME
            """).map { row in
            Table(name: String(decoding: row["TABLE_NAME"] ?? [], as: UTF8.self), rows: row.int64("TABLE_ROWS") ?? 0)
        }
    }

    /// Converts one table, showing MariaDB's progress reports; false when a
    /// stop was asked for (the server undid the table's conversion).
    /// `database` must report progress (`DatabaseConnection(reportsProgress:)`).
    func convert(_ table: Table, progress: TaskProgress) throws(DatabaseError) -> Bool {
        let quoted = "`" + table.name.map { $0 == "`" ? "``" : String($0) }.joined() + "`"
        do throws(DatabaseError) {
            try database.runLong("ALTER TABLE \(quoted) ENGINE=InnoDB") { report in
                progress.update("\(table.name): stage \(report.stage) of \(report.stages) (\(report.state)), "
                                + "\(Int(report.percent))% of it done")
                return !progress.stopRequested
            }
        } catch where error.code == .queryInterrupted {
            return false
        }
        return true
    }
}
