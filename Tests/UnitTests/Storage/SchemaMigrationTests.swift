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

    @Test func everyFileIsAMigrationWithTheSameStatement() throws {
        let files = try ScratchDirectory.names(in: Self.folder).filter { $0.hasSuffix(".sql") }
        #expect(files == SchemaMigration.all.map(\.file))
        for migration in SchemaMigration.all {
            let text = String(decoding: try #require(readFile("\(Self.folder)/\(migration.file)")), as: UTF8.self)
            let statement = text.split(separator: "\n").filter { !$0.hasPrefix("--") }.joined(separator: " ")
            #expect(statement.trimmingSpaces == migration.statement + ";", "\(migration.file)")
        }
    }
}
