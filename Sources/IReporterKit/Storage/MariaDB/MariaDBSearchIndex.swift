/// Keeps `photo_words` (sql/migrations/005) in step with the photos' rows.
/// Where the table does not exist yet (the migration not applied) it does
/// nothing: uploads work as before and `search` reports that it is broken.
struct MariaDBSearchIndex {
    let database: DatabaseConnection

    /// Rows inserted per statement, at most (one of `IDList.widths`).
    private static let rowsPerInsert = 32

    /// Indexes a new photo under its title and its author's username (an
    /// upload: nothing asked while the table is known missing, and the
    /// table's statement first, so that its absence costs one refusal).
    func add(photoID: Int64, userID: Int64, title: [UInt8]) throws {
        try database.ifTableExists("photo_words") {
            // Earlier rows of the same IdPhoto go (an InnoDB restart can hand
            // out an id again). Looked for first with a plain read: a DELETE
            // that finds nothing still locks the end of the `photo` key, and
            // concurrent uploads would deadlock on it.
            if try !database.query("SELECT 1 FROM photo_words WHERE IdPhoto = ? LIMIT 1", [.int(photoID)]).isEmpty {
                try database.execute("DELETE FROM photo_words WHERE IdPhoto = ?", [.int(photoID)])
            }
            let username = try database.query("SELECT username FROM login WHERE IdUser = ?", [.int(userID)]).first?["username"]
            try insert(Self.words(photoID: photoID, title: title, username: username))
        }
    }

    /// Asks every time: a delete skipped in the second after the migration
    /// would leave a photo uploaded meanwhile in the index.
    func remove(photoID: Int64) throws {
        try ignoringMissingTable {
            try database.execute("DELETE FROM photo_words WHERE IdPhoto = ?", [.int(photoID)])
        }
    }

    /// A photo's rows of the index: its title's and username's words.
    static func words(photoID: Int64, title: [UInt8]?, username: [UInt8]?) -> [(word: [UInt8], photoID: Int64)] {
        var words = SearchWords.indexWords(title ?? [])
        words += SearchWords.indexWords(username ?? []).filter { !words.contains($0) }
        return words.map { ($0, photoID) }
    }

    func insert(_ rows: [(word: [UInt8], photoID: Int64)]) throws {
        for group in IDList.groups(rows, widest: Self.rowsPerInsert) {
            try database.execute("INSERT IGNORE INTO photo_words (word, IdPhoto) VALUES \(IDList.marks(group.count, mark: "(?, ?)"))",
                                 group.flatMap { [.bytes($0.word), .int($0.photoID)] })
        }
    }

    private func ignoringMissingTable(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as DatabaseError where error.code == .noSuchTable {
            return
        }
    }
}
