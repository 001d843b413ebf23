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

    @Test func clusterNodesAreReadAndKeptBesideTheURL() throws {
        #expect(try DatabaseNode.list(" 10.0.0.1:3307, db2 ,[::1]:3308,") == [
            DatabaseNode(host: "10.0.0.1", port: 3307), DatabaseNode(host: "db2", port: 3306), DatabaseNode(host: "::1", port: 3308),
        ])
        #expect(try DatabaseNode.list("").isEmpty, "none: the one server of db_url")
        #expect(throws: ConfigurationError.self) { try DatabaseNode.list("db1:0") }
        #expect(throws: ConfigurationError.self) { try DatabaseNode.list("db1:x") }
        #expect(throws: ConfigurationError.self) { try DatabaseNode.list(":3306") }
        let scratch = ScratchDirectory("config")
        let file = scratch.write("ireporter.conf", Array("db_nodes = a:1,b:2\ndb_sync_wait = 0\ndb_url = mysql://u:p@x/iReport\n".utf8))
        let configuration = try Configuration.load(arguments: ["--config", file], environment: [:])
        #expect(configuration.database.nodes == [DatabaseNode(host: "a", port: 1), DatabaseNode(host: "b", port: 2)],
                "db_url after db_nodes keeps them")
        #expect(configuration.database.syncWait == 0 && configuration.database.user == "u")
    }

    @Test func replicasTakeThePrimarysCredentialsAndTurnTheWorkerCachesOff() throws {
        let scratch = ScratchDirectory("config")
        let file = scratch.write("ireporter.conf", Array(
            "db_replicas = r1:3307, r2\ndb_url = mysql://u:p@primary:3306/iReport\ndb_replica_wait_ms = 250\n".utf8))
        let configuration = try Configuration.load(arguments: ["--config", file], environment: [:])
        #expect(configuration.replicas == [DatabaseNode(host: "r1", port: 3307), DatabaseNode(host: "r2", port: 3306)])
        #expect(configuration.replicaWaitMillis == 250)
        let replica = configuration.replicaSettings(0)
        #expect((replica.host, replica.port, replica.user, replica.password) == ("r1", 3307, "u", "p"))
        #expect(replica.nodes.isEmpty && replica.socket == nil)
        #expect(configuration.apiPolicy.streamCacheMillis == 0 && configuration.apiPolicy.searchCacheMillis == 0,
                "a copy read from a lagging replica must not be kept under the current generation")
        #expect(!configuration.warnings.contains { $0.contains("db_replicas") })
        // A URL naming no port, the password in an option file: the replica's own host and port still.
        var primary = try DatabaseSettings(url: "mysql://u@primary/iReport")
        primary.optionFile = "/etc/mysql/ireporter.cnf"
        var passwordInFile = configuration
        passwordInFile.database = primary
        #expect(passwordInFile.replicaSettings(0).partsInURL.isSuperset(of: [.host, .port]))

        var withoutURL = Configuration()
        withoutURL.replicas = configuration.replicas
        #expect(withoutURL.warnings.contains { $0.hasPrefix("db_replicas without db_url") })
        #expect(Configuration().apiPolicy.streamCacheMillis == 1000, "no replica: the caches as before")
    }

    @Test func connectionsSpreadOverTheNodesAndTryARefusedOneLast() {
        let nodes = (1...3).map { DatabaseNode(host: "n\($0)") }
        #expect(ClusterNodes(nodes, first: 0).order(now: 0) == [0, 1, 2])
        #expect(ClusterNodes(nodes, first: 4).order(now: 0) == [1, 2, 0], "a worker's number picks where it starts")
        var cluster = ClusterNodes(nodes, first: 0)
        cluster.avoid(0, now: 1000)
        cluster.avoid(1, now: 900)
        #expect(cluster.order(now: 1000) == [2, 1, 0], "refused ones last, the one refused longest ago first")
        #expect(cluster.order(now: 1000 + ClusterNodes.avoidMillis) == [0, 1, 2], "back in turn once the time is up")
        cluster.trust(1)
        #expect(cluster.order(now: 1000) == [1, 2, 0])
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

    @Test func aHalfConfiguredBackendIsRefusedByName() throws {
        for (environment, missing) in [(["IREPORTER_PHOTO_STORE": "s3"], "photo_store = s3 needs s3_url"),
                                       (["IREPORTER_SESSION_STORE": "redis"], "session_store = redis needs redis_url")] {
            #expect { try Configuration.load(arguments: [], environment: environment) } throws: { error in
                "\(error)".contains(missing)
            }
        }
        let s3 = try Configuration.load(arguments: [], environment: [
            "IREPORTER_PHOTO_STORE": "s3", "IREPORTER_S3_URL": "http://k:s@127.0.0.1:9000/photos", "IREPORTER_S3_TIMEOUT_MS": "300"])
        #expect(s3.s3Settings?.timeoutMillis == 300 && s3.s3Settings?.bucket == "photos")
        #expect(throws: ConfigurationError.self) {
            try Configuration.load(arguments: [], environment: ["IREPORTER_S3_URL": "http://127.0.0.1:9000/photos"])
        }
    }

    /// A value for every key, other than the default where the key allows one
    /// (`db_option_file`, which must exist, is added by the test).
    static let samples: [String: String] = [
        "listen": "127.0.0.1:9001", "listen_mode": "0600", "listen_backlog": "128", "listen_owner": "nobody",
        "listen_group": "nogroup", "workers": "7", "max_requests": "1000", "request_timeout": "60", "upload_deadline": "40",
        "shutdown_timeout": "5", "slow_request_ms": "250", "access_log": "stderr", "log_file": "/var/log/x.log", "log_level": "warning", "log_format": "json",
        "ping_path": "", "status_path": "/status", "ready_path": "/ready", "db_url": "mysql://a%40b:p%2Bw@db.example:3307/photos?socket=%2Fs.sock",
        "db_option_group": "other", "db_charset": "utf8mb4", "upload_dir": "/srv/upload",
        "db_nodes": "10.0.0.1:3306,[fd00::2]:3307,db3.example:3306", "db_sync_wait": "3",
        "session_store": "files", "session_dir": "/srv/sessions", "shared_state_file": "/run/ireporter/state",
        "session_idle_timeout": "3600",
        "session_absolute_timeout": "86400", "cookie_secure": "always", "password_hash_memory_kib": "65536",
        "password_hash_iterations": "3", "password_hash_parallelism": "2", "password_hash_concurrency": "4",
        "upload_rate_limit": "0", "stream_cache_ms": "0", "stream_answer_file": "/run/ireporter/stream-answer", "search_cache_ms": "5", "comment_rate_limit": "7", "vote_rate_limit": "8", "follow_rate_limit": "9", "follow_limit": "10", "live_publish_url": "http://127.0.0.1:8080/ireporter-publish",
        "live_publish_key": "0123456789abcdef0123", "preview_rate_limit": "9", "export_rate_limit": "3", "registration_limit": "7", "mastodon_rate_limit": "11", "oauth_token_lifetime_days": "30",
        "flickr_api_keys": "key1,key2", "public_url": "https://photos.example.com:8443/", "max_upload_bytes": "1048576",
        "max_image_pixels": "1000000", "pid_file": "/run/x.pid", "user": "www-data",
        "listen_allowed_clients": "127.0.0.1,::1", "session_max_per_user": "5", "max_decode_memory_mib": "64",
        "image_decode_concurrency": "3", "redis_url": "redis://:pw@10.0.0.7:6380/2", "redis_timeout_ms": "250",
        "redis_session_locking": "on", "legacy_photo_urls": "off",
        "db_replicas": "10.0.0.5:3306,db-replica.example:3307", "db_replica_wait_ms": "250",
        "photo_store": "files", "s3_url": "https://AKIA1:s%2Fcret@s3.example:9000/photos?region=eu-west-1",
        "s3_timeout_ms": "750",
    ]

    @Test func everyKeyRoundTripsThroughAFileAndTheEnvironment() throws {
        let scratch = ScratchDirectory("config")
        let empty = scratch.write("empty.conf", [])
        var samples = Self.samples
        samples["db_option_file"] = scratch.write("my.cnf", [])
        let keys = Configuration.settings.map(\.key)
        #expect(Set(keys).count == keys.count, "a key declared twice")
        #expect(Set(samples.keys) == Set(keys), "every declared key needs a sample, and only those")
        for setting in Configuration.settings {
            let sample = try #require(samples[setting.key])
            let file = scratch.write("ireporter.conf", Array("\(setting.key) = \(sample)\n".utf8))
            let fromFile = try Configuration.load(arguments: ["--config", file], environment: [:])
            let fromEnvironment = try Configuration.load(arguments: ["--config", empty],
                                                         environment: ["IREPORTER_" + setting.key.uppercased(): sample])
            for configuration in [fromFile, fromEnvironment] {
                #expect(setting.rule.format(configuration) == sample, "\(setting.key)")
                // Two declarations writing one property would show here.
                for other in Configuration.settings where other.key != setting.key {
                    #expect(other.rule.format(configuration) == other.defaultText, "\(setting.key) changed \(other.key)")
                }
            }
        }
    }

    @Test func thePublicAddressIsAnHTTPURLKeptWithItsFinalSlash() throws {
        func publicURL(_ value: String) throws -> String {
            try Configuration.load(arguments: [], environment: ["IREPORTER_CONFIG": "/dev/null", "IREPORTER_PUBLIC_URL": value]).publicURL
        }
        #expect(try publicURL("https://photos.example.com") == "https://photos.example.com/")
        #expect(try publicURL("http://[::1]:8080/site/") == "http://[::1]:8080/site/")
        #expect(try publicURL("") == "")
        for bad in ["photos.example.com", "ftp://x/", "https://", "https:///x", "https://a b/", "https://u@evil.example/",
                    "https://x/?q", "https://x/\"><script>"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try publicURL(bad) }
        }
    }

    @Test func badValuesAndUnknownKeysAreRefusedByName() throws {
        let scratch = ScratchDirectory("config")
        let file = scratch.write("ireporter.conf", Array("""
            workers = 0
            listen_mode = 0999
            cookie_secure = never
            session_store = memcached
            db_option_file = /nonexistent/my.cnf
            bogus = 1

            """.utf8))
        let error = try #require(throws: ConfigurationError.self) {
            try Configuration.load(arguments: ["--config", file], environment: [:])
        }
        #expect(error.description.split(separator: "\n") == [
            "\(file):1: workers must be a whole number in 1...256, not \"0\"",
            "\(file):2: listen_mode must be octal like 0660, not \"0999\"",
            "\(file):3: cookie_secure must be auto or always, not \"never\"",
            "\(file):4: session_store must be files or redis, not \"memcached\"",
            "\(file):5: db_option_file /nonexistent/my.cnf is not readable",
            "\(file):6: unknown setting \"bogus\"",
        ])
    }

    @Test func theDocsTableIsMadeFromTheDeclarations() throws {
        var root = #filePath
        for _ in 0..<4 { root = String(root[..<root.lastIndex(of: "/")!]) }
        let docs = String(decoding: try #require(readFile("\(root)/docs/CONFIGURATION.md")), as: UTF8.self)
        let lines = docs.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "| key | default | meaning |"))
        let table = lines[start...].prefix { $0.hasPrefix("|") }.map { $0 + "\n" }.joined()
        let expected = Configuration.referenceTable()
        #expect(table == expected, "docs/CONFIGURATION.md's table differs from Configuration.settings; replace it with:\n\(expected)")
        #expect(Configuration.settings.allSatisfy { !$0.doc.contains("|") }, "a | would split a table cell")
    }

    @Test func warningsSayWhatIsProbablyNotMeant() throws {
        let scratch = ScratchDirectory("config")
        #expect(chmod(scratch.path, 0o1733) == 0)  // Debian's /var/lib/php/sessions
        var configuration = Configuration()
        configuration.sessionDirectory = scratch.path
        configuration.listen = ":9000"
        configuration.database = try DatabaseSettings(url: "mysql://ireport:ireport@localhost/iReport")
        let warnings = configuration.warnings
        #expect(warnings.count == 3)
        #expect(warnings.contains { $0.contains("well-known") })
        #expect(warnings.contains { $0.contains("\(scratch.path) may be written by other users (mode 1733)") })
        #expect(warnings.contains { $0.contains("listen = :9000 accepts FastCGI connections from every address") })

        #expect(chmod(scratch.path, 0o700) == 0)
        configuration.database = try DatabaseSettings(url: "mysql://ireport:s3cret@localhost/iReport")
        configuration.listenAllowedClients = try ClientAllowList("10.0.0.7, ::1", key: "listen_allowed_clients")
        #expect(configuration.warnings.isEmpty)
        configuration.listenAllowedClients = ClientAllowList()
        configuration.listen = "127.0.0.1:9000"
        #expect(configuration.warnings.isEmpty)

        // A live stream without the publisher's key: none, and said so.
        configuration.livePublishURL = "http://127.0.0.1:8080/ireporter-publish"
        #expect(configuration.warnings.count == 1)
        #expect(configuration.warnings.first?.hasPrefix("live_publish_url without a live_publish_key") == true)
        configuration.livePublishKey = "0123456789abcdef"
        #expect(configuration.warnings.isEmpty)

        // A stream answer file the server cannot keep: none, and said so.
        configuration.streamAnswerFile = "/run/ireporter/stream-answer"
        #expect(configuration.warnings.isEmpty)
        configuration.streamCacheMillis = 0
        #expect(configuration.warnings == ["stream_answer_file is off with the stream cache off (stream_cache_ms = 0, or "
                                           + "db_replicas): nginx asks the server for every stream"])
        configuration.streamAnswerFile = ""

        // An upload deadline the watchdog would beat.
        configuration.uploadDeadline = 120
        #expect(configuration.warnings == ["upload_deadline (120 s) is not below request_timeout (120 s): "
                                           + "a slow upload's worker is killed before the upload can give up cleanly"])
        configuration.requestTimeout = 0
        #expect(configuration.warnings.isEmpty)
    }

    @Test func allowedClientsAreAddresses() throws {
        let list = try ClientAllowList(" 10.0.0.7 ,::1,", key: "listen_allowed_clients")
        #expect(list.description == "10.0.0.7,::1")
        let error = try #require(throws: ConfigurationError.self) {
            try ClientAllowList("10.0.0.7,web1", key: "listen_allowed_clients")
        }
        #expect(error.description == "listen_allowed_clients: \"web1\" is not an IPv4 or IPv6 address")
    }

    /// The peer of a real loopback connection, against the list.
    @Test func allowedClientsAreCheckedOnTheConnection() throws {
        let listener = try ListeningSocket.open("127.0.0.1:0", mode: 0o600, backlog: 4)
        defer { close(listener.fd) }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener.fd, $0, &length) }
        }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
        }
        #expect(connected == 0)
        let accepted = accept(listener.fd, nil, nil)
        defer { close(accepted) }
        #expect(try ClientAllowList("10.0.0.7,127.0.0.1", key: "k").refusedPeer(connection: accepted) == nil)
        #expect(try ClientAllowList("10.0.0.7,::1", key: "k").refusedPeer(connection: accepted) == "127.0.0.1",
                "refused, named in the warning")
        #expect(ClientAllowList().refusedPeer(connection: accepted) == nil, "empty: everyone")
    }
}

struct CheckConfigTests {
    @Test func everyMalformedLineIsReportedWithTheOtherProblemsInLineOrder() throws {
        let scratch = ScratchDirectory("config")
        let file = scratch.write("ireporter.conf", Array("""
            # a comment
            workers 4
            wokers = 4
            listen_mode = 9z
            just words

            """.utf8))
        let error = try #require(throws: ConfigurationError.self) {
            try Configuration.load(arguments: ["--config", file], environment: [:])
        }
        #expect(error.description.split(separator: "\n") == [
            "\(file):2: expected key = value",
            "\(file):3: unknown setting \"wokers\" (did you mean workers?)",
            "\(file):4: listen_mode must be octal like 0660, not \"9z\"",
            "\(file):5: expected key = value",
        ])
    }

    @Test func unknownVariablesAreWarnedAboutWithTheSettingMeant() throws {
        let environment = ["IREPORTER_WOKERS": "8", "IREPORTER_WORKERS": "2", "IREPORTER_CONFIG": "/dev/null",
                           "IREPORTER_SOMETHING_ELSE": "1", "PATH": "/bin"]
        #expect(Configuration.unknownVariableWarnings(environment) == [
            "IREPORTER_SOMETHING_ELSE is no setting: ignored (docs/CONFIGURATION.md lists them)",
            "IREPORTER_WOKERS is no setting: ignored (did you mean IREPORTER_WORKERS?)",
        ])
        let configuration = try Configuration.load(arguments: [], environment: environment)
        #expect(configuration.workers == 2)
        #expect(configuration.warnings.contains("IREPORTER_WOKERS is no setting: ignored (did you mean IREPORTER_WORKERS?)"),
                "said at start and by --check-config, with the other warnings")
    }
}
