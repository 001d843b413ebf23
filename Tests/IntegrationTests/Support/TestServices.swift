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

    /// Drops both tables and creates them again from a schema file in `sql/`.
    static func resetTables(_ database: DatabaseConnection, schema: String = "schema.sql") throws {
        try database.command("DROP TABLE IF EXISTS login, photos")
        try runSQLFile(database, schema)
    }

    /// Runs the statements of a file in `sql/`.
    static func runSQLFile(_ database: DatabaseConnection, _ name: String) throws {
        let text = try readText("\(repositoryRoot)/sql/\(name)")
        let withoutComments = text.split(separator: "\n").filter { !$0.hasPrefix("--") }.joined(separator: "\n")
        for statement in withoutComments.split(separator: ";") where !statement.allSatisfy(\.isWhitespace) {
            try database.command(String(statement))
        }
    }

    static func readText(_ path: String) throws -> String {
        guard let bytes = readBytes(path) else { throw SystemError("open \(path)") }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A real JPEG of the given size, made with gd.
func makeJPEG(width: Int32, height: Int32, quality: Int32 = 85) -> [UInt8] {
    let image = gdImageCreateTrueColor(width, height)!
    defer { gdImageDestroy(image) }
    gdImageFilledRectangle(image, 0, 0, width / 2, height, 0xCC3322)
    gdImageFilledRectangle(image, width / 2, 0, width, height, 0x2255CC)
    var size: Int32 = 0
    let data = gdImageJpegPtr(image, &size, quality)!
    defer { gdFree(data) }
    return Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
}

/// The (width, height) a JPEG declares in its SOF marker.
func jpegSize(_ bytes: [UInt8]) -> (Int, Int)? {
    var i = 2
    while i + 9 < bytes.count {
        guard bytes[i] == 0xFF else { i += 1; continue }
        let marker = bytes[i + 1]
        if (0xC0...0xC2).contains(marker) {
            return (Int(bytes[i + 7]) << 8 | Int(bytes[i + 8]), Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]))
        }
        i += 2 + (Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]))
    }
    return nil
}

/// Every suite that uses the one test database, run one test at a time.
@Suite(.serialized, .enabled(if: TestServices.available, "needs MariaDB: run `make test`"))
enum DatabaseTests {}
