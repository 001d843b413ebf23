/// `ireporter search-index`: fills `photo_words` for the photos stored
/// before it existed (or by the PHP version), in batches, each its own
/// transaction, from where the last run stopped (`photo_words_backfill`), so
/// it can be stopped and run again at any time, while the server serves.
/// A batch locks its photos' rows while it writes their words, so a delete
/// running at the same time waits and then removes them: no words outlive
/// their photo. Uploads index themselves; a photo indexed twice is the same.
public struct MariaDBSearchBackfill {
    let database: DatabaseConnection
    let batchSize: Int
    private let index: MariaDBSearchIndex

    public init(database: DatabaseConnection, batchSize: Int = 500) {
        self.database = database
        self.batchSize = batchSize
        index = MariaDBSearchIndex(database: database)
    }

    /// Starts again from the first photo at the next run.
    public func restart() throws {
        try database.execute("DELETE FROM photo_words_backfill WHERE id = 1")
    }

    /// The photos a run would index now (from where the last one stopped):
    /// the progress's total. Photos uploaded meanwhile index themselves.
    public func remaining() throws -> Int {
        let next = try database.query("SELECT next_photo FROM photo_words_backfill WHERE id = 1").first?.int64("next_photo") ?? 0
        return Int(try database.query("SELECT COUNT(*) AS n FROM photos WHERE IdPhoto >= ?", [.int(next)]).first?.int64("n") ?? 0)
    }

    /// Indexes batches until every photo is done or `maxBatches` ran;
    /// returns how many photos it indexed. `progress` gets the running
    /// total and the next IdPhoto after each batch; `shouldStop` is asked
    /// before each batch.
    public func run(maxBatches: Int = Int.max, shouldStop: () -> Bool = { false },
                    progress: (Int, Int64) -> Void = { _, _ in }) throws -> Int {
        var total = 0
        for _ in 0..<maxBatches {
            // Between two batches: each is whole, and the next run goes on from here.
            if shouldStop() { break }
            let (indexed, next) = try step()
            if indexed == 0 { break }
            total += indexed
            progress(total, next)
        }
        return total
    }

    /// One batch: (photos indexed, the next IdPhoto to start from).
    private func step() throws -> (Int, Int64) {
        try database.transaction {
            let next = try database.query("SELECT next_photo FROM photo_words_backfill WHERE id = 1 FOR UPDATE")
                .first?.int64("next_photo") ?? 0
            let rows = try database.query(
                "SELECT p.IdPhoto, p.title, l.username FROM photos p LEFT JOIN login l ON (l.IdUser = p.IdUser) "
                    + "WHERE p.IdPhoto >= ? ORDER BY p.IdPhoto LIMIT \(batchSize) FOR UPDATE", [.int(next)])
            guard let first = rows.first?.int64("IdPhoto"), let last = rows.last?.int64("IdPhoto") else { return (0, next) }
            try database.execute("DELETE FROM photo_words WHERE IdPhoto BETWEEN ? AND ?", [.int(first), .int(last)])
            try index.insert(rows.flatMap { row in
                row.int64("IdPhoto").map { MariaDBSearchIndex.words(photoID: $0, title: row["title"], username: row["username"]) } ?? []
            })
            try database.execute("INSERT INTO photo_words_backfill (id, next_photo) VALUES (1, ?) "
                                 + "ON DUPLICATE KEY UPDATE next_photo = VALUES(next_photo)", [.int(last + 1)])
            return (rows.count, last + 1)
        }
    }
}
