/// One of `sql/migrations/`: an additive, idempotent change to the original
/// schema (the PHP version's database included), applied by `ireporter
/// migrate` (the first one also by `migrate-passwords`). The statement is
/// the file's (a unit test compares them), with the question that tells
/// whether it is applied already: a stopped run goes on where it stopped.
struct SchemaMigration: Sendable {
    enum Outcome: Equatable { case alreadyApplied, applied, stopped }

    let file: String
    let statement: String
    /// Answers a row once the migration is applied.
    let appliedQuery: String

    static let widenPass = SchemaMigration(
        file: "001-widen-pass.sql",
        statement: "ALTER TABLE `login` MODIFY `pass` varchar(\(MariaDBUserStore.hashColumnLength)) CHARACTER SET latin1 NOT NULL",
        appliedQuery: """
            SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'login' \
            AND COLUMN_NAME = 'pass' AND CHARACTER_MAXIMUM_LENGTH >= \(MariaDBUserStore.hashColumnLength)
            """)

    static let indexUsername = SchemaMigration(
        file: "002-index-username.sql",
        statement: "CREATE INDEX IF NOT EXISTS `username` ON `login` (`username`)",
        appliedQuery: """
            SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'login' \
            AND INDEX_NAME = 'username'
            """)

    static let all = [widenPass, indexUsername]

    var name: String { String(file.dropLast(".sql".count)) }

    func isApplied(on database: DatabaseConnection) throws(DatabaseError) -> Bool {
        !(try database.query(appliedQuery)).isEmpty
    }

    /// Applies it unless it is already, showing MariaDB's progress reports
    /// (a copy of a large MyISAM table takes minutes); a stop asked for
    /// meanwhile interrupts it, and the server undoes it whole.
    /// `database` must report progress (`DatabaseConnection(reportsProgress:)`).
    func apply(on database: DatabaseConnection, progress: TaskProgress) throws(DatabaseError) -> Outcome {
        if try isApplied(on: database) { return .alreadyApplied }
        if progress.stopRequested { return .stopped }
        do throws(DatabaseError) {
            try database.runLong(statement) { report in
                progress.update("\(name): stage \(report.stage) of \(report.stages) (\(report.state)), "
                                + "\(Int(report.percent))% of it done")
                return !progress.stopRequested
            }
        } catch where error.code == .queryInterrupted {
            return .stopped
        }
        return .applied
    }
}
