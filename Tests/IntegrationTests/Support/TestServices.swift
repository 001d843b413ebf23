#if canImport(Glibc)
import Glibc
#endif
import CGD
import Testing
@testable import IReporterKit
import TestSupport

/// The real MariaDB the tests run against, started by `scripts/test.sh`
/// (`make test`), which passes it as IREPORTER_TEST_DB_URL.
enum TestServices {
    static let databaseURL: String? = getenv("IREPORTER_TEST_DB_URL").map { String(cString: $0) }
    /// Under `make test` a missing database is a failure, not a skip.
    static let required = getenv("IREPORTER_REQUIRE_SERVICES").map { String(cString: $0) } == "1"
    static var available: Bool { databaseURL != nil || required }

    static func settings() throws -> DatabaseSettings {
        guard let databaseURL else {
            throw ConfigurationError("IREPORTER_TEST_DB_URL is not set: run the integration tests with `make test`")
        }
        return try DatabaseSettings(url: databaseURL)
    }

    static let repositoryRoot: String = {
        var path = #filePath
        for _ in 0..<4 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()

    /// Migration 003 (photo details, counts, votes, comments), 004 (an index
    /// for one person's photos), 005 (the search index), 006 (the photos'
    /// secrets), 008 (photos by upload time), 009 (follows, notifications)
    /// 010 (OAuth), 011 (media waiting for a post, photos' descriptions),
    /// 012 (posts' idempotency keys), 013 (one person's votes and comments),
    /// 014 (the OAuth tables' sweep), 015 (read markers) and 016 (when accounts registered).
    static let reactionsMigrations = ["migrations/003-photo-details-comments-votes.sql", "migrations/004-index-photos-user.sql",
                                      "migrations/005-photo-words.sql", "migrations/006-photo-secrets.sql",
                                      "migrations/008-index-photo-upload-time.sql", "migrations/009-follows-notifications.sql", "migrations/010-oauth.sql",
                                      "migrations/011-media-attachments.sql", "migrations/012-status-idempotency.sql",
                                      "migrations/013-index-user-votes-comments.sql", "migrations/014-index-oauth-sweep.sql",
                                      "migrations/015-read-markers.sql", "migrations/016-account-registered.sql"]

    /// Drops every table and creates them again from a schema file in
    /// `sql/`, then (unless `migrated` is false) with migrations 003 to 006 and 008 to 016.
    static func resetTables(_ database: DatabaseConnection, schema: String = "schema.sql", migrated: Bool = true) throws {
        try database.command("DROP TABLE IF EXISTS login, photos, photo_details, photo_counts, votes, comments, "
                             + "photo_words, photo_words_backfill, photo_secrets, photos_removed, follows, notifications, "
                             + "media_attachments, photo_descriptions, oauth_apps, oauth_tokens, oauth_codes, status_idempotency, read_markers, "
                             + "login_registered")
        try runSQLFile(database, schema)
        if migrated { try reactionsMigrations.forEach { try runSQLFile(database, $0) } }
    }

    /// Runs the statements of a file in `sql/`.
    static func runSQLFile(_ database: DatabaseConnection, _ name: String) throws {
        let text = try readText("\(repositoryRoot)/sql/\(name)")
        let withoutComments = text.split(separator: "\n").filter { !$0.hasPrefix("--") }.joined(separator: "\n")
        for statement in withoutComments.split(separator: ";") where !statement.allSatisfy(\.isWhitespace) {
            try database.command(String(statement))
        }
    }

    /// The plan of a query with its parameters written in (EXPLAIN does not take them).
    static func explain(_ sql: String, _ parameters: [DatabaseValue], _ database: DatabaseConnection) throws -> [Row] {
        var text = ""
        var values = parameters.makeIterator()
        for character in sql {
            guard character == "?", let value = values.next() else { text.append(character); continue }
            switch value {
            case .int(let number): text += String(number)
            case .bytes(let bytes): text += "'" + String(decoding: bytes, as: UTF8.self) + "'"
            }
        }
        return try database.query("EXPLAIN " + text)
    }

    static func readText(_ path: String) throws -> String {
        guard let bytes = readFile(path) else { throw SystemError("open \(path)") }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Every suite that uses the one test database, run one test at a time.
@Suite(.serialized, .enabled(if: TestServices.available, "needs MariaDB: run `make test`"))
enum DatabaseTests {}
