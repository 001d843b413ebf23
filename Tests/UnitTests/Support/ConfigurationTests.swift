#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

struct ConfigurationTests {
    @Test func databaseURLForms() throws {
        let tcp = try DatabaseSettings(url: "mysql://bob:p%40ss:w@db.example:3307/photos")
        #expect(tcp.user == "bob")
        #expect(tcp.password == "p@ss:w")
        #expect(tcp.host == "db.example")
        #expect(tcp.port == 3307)
        #expect(tcp.database == "photos")
        #expect(tcp.socket == nil)
        let socket = try DatabaseSettings(url: "mysql://ireport:ireport@localhost/iReport?socket=/run/mysqld/mysqld.sock")
        #expect(socket.host == "localhost")
        #expect(socket.socket == "/run/mysqld/mysqld.sock")
        #expect(socket.port == 3306)
        let bare = try DatabaseSettings(url: "mysql://root@127.0.0.1/x?charset=utf8mb4")
        #expect(bare.user == "root" && bare.password == "" && bare.charset == "utf8mb4")
        #expect(throws: ConfigurationError.self) { try DatabaseSettings(url: "postgres://x@y/z") }
        #expect(throws: ConfigurationError.self) { try DatabaseSettings(url: "mysql://x@y:notaport/z") }
        #expect(throws: ConfigurationError.self) { try DatabaseSettings(url: "mysql://x@y/z?bogus=1") }
    }

    @Test func fileThenEnvironmentThenFlags() throws {
        let scratch = ScratchDirectory("config")
        let path = scratch.write("ireporter.conf", Array("""
            # a comment
            listen = /run/x.sock   # trailing comment
            workers = 3
            upload_dir = /srv/upload
            db_url = mysql://a:b@localhost/db?socket=/s.sock

            """.utf8))
        let configuration = try Configuration.load(arguments: ["--config", path, "--workers=6"],
                                                   environment: ["IREPORTER_UPLOAD_DIR": "/env/upload",
                                                                 "IREPORTER_WORKERS": "5"])
        #expect(configuration.listen == "/run/x.sock")
        #expect(configuration.workers == 6)
        #expect(configuration.uploadDirectory == "/env/upload")
        #expect(configuration.database.socket == "/s.sock")
        #expect(configuration.database.charset == "latin1")
    }

    @Test func concurrentPasswordHashesDefaultToTheCPUs() throws {
        let cpus = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #expect(try Configuration.load(arguments: [], environment: [:]).apiPolicy.concurrentHashes == cpus)
        let three = try Configuration.load(arguments: [], environment: ["IREPORTER_PASSWORD_HASH_CONCURRENCY": "3"])
        #expect(three.apiPolicy.concurrentHashes == 3)
        #expect(throws: ConfigurationError.self) {
            try Configuration.load(arguments: [], environment: ["IREPORTER_PASSWORD_HASH_CONCURRENCY": "65"])
        }
    }

    @Test func everyProblemIsReportedAtOnce() {
        do {
            _ = try Configuration.load(arguments: [], environment: ["IREPORTER_WORKERS": "0", "IREPORTER_LISTEN_MODE": "9z",
                                                                    "IREPORTER_DB_URL": "nope"])
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("IREPORTER_WORKERS"))
            #expect(error.description.contains("IREPORTER_LISTEN_MODE"))
            #expect(error.description.contains("IREPORTER_DB_URL"))
        }
        #expect(throws: ConfigurationError.self) { try Configuration.load(arguments: ["--bogus", "1"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try Configuration.load(arguments: ["--config", "/nonexistent"], environment: [:]) }
    }
}
