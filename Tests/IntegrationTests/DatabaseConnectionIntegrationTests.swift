import Testing
@testable import IReporterKit
import TestSupport

extension DatabaseTests {
    /// How a connection finds its server and credentials on the real MariaDB.
    @Suite struct DatabaseConnectionIntegrationTests {
        /// `db_option_file` gives what `db_url` does not name: the password
        /// kept out of the configuration, in a file only the server reads.
        @Test func anOptionFileGivesThePasswordTheURLLeavesOut() throws {
            let full = try TestServices.settings()
            #expect(!full.password.isEmpty, "the test server's user has a password")
            let scratch = ScratchDirectory("option-file")
            var settings = try DatabaseSettings(url: "mysql://\(full.user)@\(full.host):\(full.port)/\(full.database)"
                                                    + (full.socket.map { "?socket=\($0)" } ?? ""))
            settings.optionFile = scratch.write("my.cnf", Array("[client]\nuser=nobody\n[ireporter]\npassword=\(full.password)\n".utf8))
            let database = DatabaseConnection(settings: settings)
            let row = try #require(try database.query("SELECT CURRENT_USER() AS user").first)
            #expect(String(decoding: row["user"] ?? [], as: UTF8.self).hasPrefix("\(full.user)@"), "the URL's user, not the file's")

            // A URL naming no database: its default, iReport, as without a file (the file has none).
            var noDatabase = try DatabaseSettings(url: "mysql://\(full.user)@\(full.host):\(full.port)"
                                                      + (full.socket.map { "?socket=\($0)" } ?? ""))
            noDatabase.optionFile = settings.optionFile
            let named = try DatabaseConnection(settings: noDatabase).query("SELECT DATABASE() AS name").first?["name"]
            #expect(named.map { String(decoding: $0, as: UTF8.self) } == "iReport")
        }
    }
}
