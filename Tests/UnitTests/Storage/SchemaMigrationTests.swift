import Testing
import TestSupport
@testable import IReporterKit

/// `ireporter migrate` carries the statements of `sql/migrations/` (the
/// binary is deployed without the repository): the files and the binary
/// must say the same.
struct SchemaMigrationTests {
    static let folder: String = {
        var path = #filePath
        for _ in 0..<4 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path + "/sql/migrations"
    }()

    /// SQL without its comments, as words: the layout of the text aside.
    static func words(_ sql: String) -> [String] {
        sql.split(separator: "\n").filter { !$0.trimmingSpaces.hasPrefix("--") }.joined(separator: " ")
            .split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    }

    @Test func everyFileIsAMigrationWithTheSameStatements() throws {
        let files = try ScratchDirectory.names(in: Self.folder).filter { $0.hasSuffix(".sql") }
        #expect(files == SchemaMigration.all.map(\.file))
        for migration in SchemaMigration.all {
            let text = String(decoding: try #require(readFile("\(Self.folder)/\(migration.file)")), as: UTF8.self)
            #expect(Self.words(text) == Self.words(migration.statements.map { $0 + ";" }.joined(separator: "\n")),
                    "\(migration.file)")
        }
    }
}
