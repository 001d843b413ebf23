#if canImport(Glibc)
import Glibc
#endif

public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Every setting, with its default; `settings` below declares how each is
/// read from a file or an `IREPORTER_*` variable, and documents it.
public struct Configuration: Sendable {
    public var listen = ""
    public var listenMode: mode_t = 0o660
    public var listenBacklog: Int32 = 511
    /// `listen_allowed_clients`: the peers a TCP `listen` accepts; empty = any.
    public var listenAllowedClients = ClientAllowList()
    public var workers = 4
    public var database = DatabaseSettings()
    public var uploadDirectory = "/var/www/iReporter/upload"
    public var legacyPhotoURLs = true
    /// `photo_store`: where the photos are kept.
    public var photoBackend = PhotoBackend.files
    /// `s3_url`: nil = no bucket.
    public var s3: S3Settings?
    /// Connect and request timeout of the bucket.
    public var s3TimeoutMillis = 5000
    public var sessionDirectory = "/var/lib/php/sessions"
    /// `shared_state_file`; empty: `sharedStatePath` beside the sessions.
    public var sharedStateFile = ""
    public var sessionIdleTimeout = 7 * 24 * 3600
    public var maxUploadBytes = 20 * 1024 * 1024
    public var maxImagePixels = 50_000_000
    /// What one decode may hold for a progressive (multi-scan) JPEG's coefficients.
    public var maxDecodeMemoryMiB = 128
    /// Image decodes at once across the workers; 0 = the number of CPUs.
    public var imageDecodeConcurrency = 0
    public var pidFile = ""
    public var user = ""
    public var listenOwner = ""
    public var listenGroup = ""
    public var maxRequests = 0
    public var requestTimeout = 120
    public var uploadDeadline = 50
    public var shutdownTimeout = 30
    public var slowRequestMillis = 0
    public var accessLog = ""
    public var logFile = ""
    public var logLevel = Log.Level.info
    public var logFormat = Log.Format.text
    public var pingPath = "/ireporter-ping"
    public var statusPath = "/ireporter-status"
    public var readyPath = "/ireporter-ready"
    public var uploadRateLimit = 120
    public var streamCacheMillis = 1000
    public var streamAnswerFile = ""
    public var searchCacheMillis = 60000
    public var commentRateLimit = 120
    public var voteRateLimit = 600
    public var followRateLimit = 200
    public var followLimit = 7500
    /// The Nchan publisher location new photos are posted to; empty: none.
    public var livePublishURL = ""
    /// `public_url`, ending in `/`; empty: the web server's name for the site.
    public var publicURL = ""
    /// The key the publisher location asks for.
    public var livePublishKey = ""
    public var previewRateLimit = 300
    public var exportRateLimit = 10
    public var registrationLimit = 100
    /// The Mastodon-compatible API's requests per account (or per address
    /// without a user's token) in 5 minutes; 0: no limit.
    public var mastodonRateLimit = 300
    /// Days an OAuth access token lasts; 0: until revoked.
    public var oauthTokenLifetimeDays = 0
    /// Comma-separated; empty: the Flickr REST endpoint accepts any api_key.
    public var flickrAPIKeys = ""
    public var passwordHashing = PasswordHasher.Parameters()
    /// Argon2 hashes computed at once across the workers; 0 = the number of CPUs.
    public var passwordHashConcurrency = 0
    public var sessionAbsoluteTimeout = 30 * 24 * 3600
    /// Live sessions per user; a login beyond it ends the user's oldest. 0 = no limit.
    public var sessionMaxPerUser = 20
    /// `Secure` on the session cookie: always, or only for HTTPS requests.
    public var cookieSecureAlways = false
    /// `session_store`: which store keeps the sessions.
    public var sessionBackend = SessionBackend.files
    /// `redis_url`: nil = no Redis (sessions and counters stay on this host).
    public var redis: RedisSettings?
    /// Redis connect and command timeout.
    public var redisTimeoutMillis = 1000
    /// `redis_session_locking`: phpredis's `redis.session.locking_enabled`.
    public var redisSessionLocking = false
    /// `db_replicas`: GTID replicas of `db_url`'s server for the plain reads;
    /// empty: every read on the primary.
    public var replicas: [DatabaseNode] = []
    /// `db_replica_wait_ms`: how long a signed-in user's read waits for a
    /// replica to apply their last write before it reads the primary.
    public var replicaWaitMillis = 1000
    /// Where the settings came from (for messages).
    public var sourceFile: String?
    /// Warnings about `IREPORTER_*` variables that are no setting.
    var unknownVariables: [String] = []

    public init() {}

    /// Every key, in the order of docs/CONFIGURATION.md's table, which is
    /// made from these lines (`referenceTable()`).
    public static let settings: [Setting] = [
        Setting("listen", .text(\.listen),
                "FastCGI socket to listen on: a unix socket path (`/run/ireporter/fcgi.sock`) or `HOST:PORT` (`127.0.0.1:9000`). Empty: use the listening socket inherited on fd 0 (spawn-fcgi, Apache mod_fcgid, systemd)."),
        Setting("listen_mode", .octal(\.listenMode),
                "permissions of a unix socket we create (octal)."),
        Setting("listen_backlog", .number(\.listenBacklog, 1...65535),
                "`listen(2)` backlog."),
        Setting("listen_allowed_clients", .addressList(\.listenAllowedClients),
                "for a TCP `listen`: the web servers allowed to connect, comma-separated IPv4/IPv6 addresses (php-fpm's `listen.allowed_clients`); others are closed unanswered. Empty: any (`listen = :9000` binds every address: a warning at start says so)."),
        Setting("listen_owner", .text(\.listenOwner),
                "owner of a unix socket we create (default: `user`)."),
        Setting("listen_group", .text(\.listenGroup),
                "group of a unix socket we create (default: `user`'s group)."),
        Setting("workers", .number(\.workers, 1...256),
                "worker processes, each serving one request at a time with its own database connection."),
        Setting("max_requests", .number(\.maxRequests, 0...1_000_000_000),
                "replace a worker after this many requests (leak guard; 0 = never). No request fails at the hand-over."),
        Setting("request_timeout", .number(\.requestTimeout, 0...86400),
                "seconds a request may run, from the moment its connection is accepted (so a web server or client that stalls mid-request counts too), before the supervisor kills its worker (only that request fails; the worker is replaced). 0 = no limit."),
        Setting("upload_deadline", .number(\.uploadDeadline, 0...86400),
                "seconds from an upload's arrival (when nginx sent it, its `REQUEST_START`, so that a wait for a free worker counts, up to 30 s; else its body read) within which its photo must be stored: one that would be committed later is dropped (its files removed, no row) and answered with an error, as its sender has given up on it (the shipped web servers wait 60 s, as do iOS's and the app's HTTP timeouts) and would send it again. Keep it below your web server's timeout and `request_timeout`. 0 = no deadline."),
        Setting("shutdown_timeout", .number(\.shutdownTimeout, 0...3600),
                "seconds SIGTERM waits for requests in flight before it kills what is left."),
        Setting("slow_request_ms", .number(\.slowRequestMillis, 0...3_600_000),
                "log a `slow request` line (with its phase timings) for requests slower than this; 0 = off. Counted on the status page."),
        Setting("access_log", .text(\.accessLog),
                "one line per request (client, command, JSON-RPC or Flickr method, outcome, bytes, total/parse/db/image milliseconds, the web server's request id: docs/DEPLOY.md, \"Logs\"): empty = off, `stderr`, or a file path (reopened on SIGUSR1)."),
        Setting("log_file", .text(\.logFile),
                "send the server's own log (stderr) to this file, reopened on SIGUSR1. Until the server has started, its errors "
                    + "go to the stderr it was given too (a terminal, the journal), so that a start that fails says why where it "
                    + "was started."),
        Setting("log_level", .choice(\.logLevel),
                "the least severe lines the server's own log keeps: `info` (all), `warning` (warnings and errors: failed logins and throttle refusals included), `error`."),
        Setting("log_format", .choice(\.logFormat),
                "`text`: `TIME ireporter[PID] LEVEL: MESSAGE` lines (what deploy/fail2ban reads); `json`: one JSON object per line, for log shippers: `time`, `level`, `pid`, `message` in the server's own log, every field in the access log."),
        Setting("ping_path", .text(\.pingPath),
                "answers `pong` while the server runs (liveness; whether it can serve is `ready_path`); empty = off."),
        Setting("status_path", .text(\.statusPath),
                "php-fpm-style status: plain text, `?json`, `?full` (per worker), `?openmetrics` (for Prometheus: docs/DEPLOY.md, Metrics); empty = off. Route it to the server for loopback only (deploy/nginx/ireporter.conf does)."),
        Setting("ready_path", .text(\.readyPath),
                "readiness for a balancer: `ready` (200) when the database, and Redis and the bucket when configured, answer and `upload_dir` is neither full nor read-only; 503 naming what is down. Each probe is bounded by its connect timeout and its answer kept 1 s per worker. `ping_path` stays the liveness answer. Route it to the server for loopback or the balancer only, like `status_path`; empty = off."),
        Setting("db_url", .databaseURL,
                "`mysql://USER:PASS@HOST:PORT/DB`; for a unix socket `mysql://USER:PASS@localhost/DB?socket=/run/mysqld/mysqld.sock`. User and password are %-decoded."),
        Setting("db_option_file", .readableFile(\.database.optionFile),
                "a MariaDB client option file (e.g. `/etc/mysql/ireporter.cnf`): its `[client]` and `[ireporter]` groups give the host, port, socket and password `db_url` does not name (its user and database are always `db_url`'s, or their defaults `ireport` and `iReport`); when `db_url` is not set at all, everything comes from the file. `db_replicas` keep their own host and port."),
        Setting("db_option_group", .text(\.database.optionGroup),
                "the option file's group read besides `[client]`."),
        Setting("db_charset", .text(\.database.charset),
                "connection character set. The original's columns are latin1 and PHP connected as latin1, so bytes are stored exactly as the client sent them. "
                    + "Another (`utf8mb4`, for a database a PHP version filled through the server's default character set: `ireporter check` says when) "
                    + "makes MariaDB convert text into the latin1 columns, as it did PHP's: text with characters latin1 has not (emoji, most scripts) "
                    + "is then refused, `The text has characters this server cannot store` (docs/COMPATIBILITY.md, \"Text\")."),
        Setting("db_nodes", .databaseNodes,
                "a MariaDB Galera cluster: its nodes as `host:port,host:port,…` (user, password and database from `db_url`, whose host is then not used). Each connection goes to a node that is Synced in the primary component (workers start at different nodes), moves to another when its node fails, and avoids a refused node for 5 s; a transaction that met a certification conflict is run again (docs/SCALING.md). Empty: the one server of `db_url`."),
        Setting("db_sync_wait", .number(\.database.syncWait, 0...15),
                "with `db_nodes`: each connection's `wsrep_sync_wait`. 1 (reads wait for the cluster's earlier writes) gives read-your-writes whichever node a request reaches; 0 lets a read on another node miss a write it just acknowledged."),
        Setting("db_replicas", .databaseReplicas,
                "GTID replicas of `db_url`'s server (the primary) as `host:port,…`, with its user, password and database (`db_url` is then needed): the stream, one photo, search and comments are read from one of them (each worker its own); writes stay on the primary. A signed-in user's read first waits, at most `db_replica_wait_ms`, until the replica has applied that user's last write (`MASTER_GTID_WAIT`), else reads the primary; a replica that fails is left alone for 5 s. The worker caches (`stream_cache_ms`, `search_cache_ms`) are off with replicas (docs/SCALING.md). Empty: every read on the primary."),
        Setting("db_replica_wait_ms", .number(\.replicaWaitMillis, 0...60_000),
                "with `db_replicas`: how long a signed-in user's read waits for the replica to apply their last write before reading the primary instead."),
        Setting("upload_dir", .text(\.uploadDirectory),
                "where `<IdPhoto>.jpg` and `<IdPhoto>-thumb.jpg` are written (the PHP site's `upload/` folder), and the photos' tree `photos/` with every size of them (docs/ARCHITECTURE.md)."),
        Setting("legacy_photo_urls", .choice(\.legacyPhotoURLs, [("on", true), ("off", false)]),
                "`on`: each photo is also `<IdPhoto>.jpg` (a hard link to its original in the tree) with its 180x180 `<IdPhoto>-thumb.jpg`, the 2012 app's guessable URLs `upload/<IdPhoto>[-thumb].jpg`, which a PHP version sharing the folder needs too. `off`, once the 2012 app and the PHP version are gone: new photos are in the tree alone, and the sweep at start (and `ireporter repair`) moves the others into the tree and removes their 2012 names, so photos are found only by their sizes' URLs with the secret. A photo stored while the database lacks migration 006 (no secret to name it by) gets its 2012 names either way, as a PHP-era photo has."),
        Setting("photo_store", .choice(\.photoBackend),
                "where photos, thumbnails and sizes are kept: `files`, in `upload_dir` (served by the web server from disk); `s3`, in the S3-compatible bucket of `s3_url`, served through the server behind the web server's cache (`deploy/nginx/ireporter-s3.conf`, docs/SCALING.md). Spool files stay in `upload_dir` either way."),
        Setting("s3_url", .s3URL,
                "`http[s]://KEY:SECRET@HOST[:PORT]/BUCKET[?region=REGION]` (path-style; KEY and SECRET %-encoded; region `us-east-1` by default): the bucket of `photo_store = s3`, requests signed with AWS Signature V4. Empty: none."),
        Setting("s3_timeout_ms", .number(\.s3TimeoutMillis, 100...600_000),
                "milliseconds to connect to the bucket and for each request; an upload that meets a store down or slower than this is answered \"temporarily unavailable\" and leaves no row."),
        Setting("session_store", .choice(\.sessionBackend),
                "which store holds the sessions: `files`, PHP-compatible session files in `session_dir`; `redis`, phpredis-compatible keys `PHPREDIS_SESSION:<id>` in `redis_url` (docs/SCALING.md)."),
        Setting("redis_url", .redisURL,
                "`redis://[[USER]:PASS@]HOST[:PORT][/DB]` or `unix:///PATH[?db=DB&password=PASS]`: the Redis shared by the app hosts. When set, login throttling, the upload, comment and vote rate limits and the stream cache's change counter are kept there (across hosts; the Argon2 and decode slots stay per host), and `session_store = redis` may use it. Empty: no Redis."),
        Setting("redis_timeout_ms", .number(\.redisTimeoutMillis, 10...60_000),
                "milliseconds to connect to Redis and for each command; a request that meets a Redis down or slower than this is answered \"temporarily unavailable\"."),
        Setting("redis_session_locking", .choice(\.redisSessionLocking, [("off", false), ("on", true)]),
                "`on` when the PHP hosts sharing the sessions set `redis.session.locking_enabled = 1`: a session is read after a PHP request's `PHPREDIS_SESSION:<id>_LOCK` is released, and ended under that lock."),
        Setting("session_dir", .text(\.sessionDirectory),
                "PHP-format session files `sess_<id>` (PHP's `session.save_path`)."),
        Setting("shared_state_file", .text(\.sharedStateFile),
                "the file every process of this installation maps to share login throttling, the upload rate limit, the Argon2 slots and the stream cache's change counter, however the processes were started (our workers, mod_fcgid's processes, CGI, several servers). Empty: `ireporter-shared-state` in `session_dir`. Made (mode 0600) by the first process; processes running as another user cannot share it."),
        Setting("session_idle_timeout", .number(\.sessionIdleTimeout, 60...(10 * 365 * 86400)),
                "seconds after its last use that a session expires and its file is removed."),
        Setting("session_absolute_timeout", .number(\.sessionAbsoluteTimeout, 60...(10 * 365 * 86400)),
                "seconds after its login that a session ends however active it is."),
        Setting("session_max_per_user", .number(\.sessionMaxPerUser, 0...100_000),
                "live sessions per user: a login beyond it ends that user's oldest session (a login loop cannot fill the disk). 0 = no limit."),
        Setting("cookie_secure", .choice(\.cookieSecureAlways, [("auto", false), ("always", true)]),
                "`auto`: the session cookie gets `Secure` when the request came over HTTPS (the `HTTPS` FastCGI parameter); `always`: every time (TLS terminated in front of the web server)."),
        Setting("password_hash_memory_kib", .number(\.passwordHashing.memoryKiB, 8...(4 * 1024 * 1024)),
                "Argon2id memory per hash, in KiB (the default is OWASP's minimum). Changing it re-hashes each password at its next login."),
        Setting("password_hash_iterations", .number(\.passwordHashing.iterations, 1...64),
                "Argon2id iterations (the default is OWASP's minimum). Changing it re-hashes each password at its next login."),
        Setting("password_hash_parallelism", .number(\.passwordHashing.parallelism, 1...16),
                "Argon2id lanes (the default is OWASP's minimum). Changing it re-hashes each password at its next login."),
        Setting("password_hash_concurrency", .number(\.passwordHashConcurrency, 0...HashingGate.maxSlots),
                "Argon2 hashes computed at once by all the workers together; 0 = the number of CPUs. The others wait their turn. Each hash holds `password_hash_memory_kib` while it runs, so a flood of logins takes at most this many times 19 MiB, whatever `workers` is; more than the CPUs would add memory, not speed."),
        Setting("upload_rate_limit", .number(\.uploadRateLimit, 0...1_000_000),
                "uploads per user per hour; 0 = no limit."),
        Setting("stream_cache_ms", .number(\.streamCacheMillis, 0...3_600_000),
                "each worker serves the rendered full stream (and, for `extras`, the newest photos' counts and each viewer's votes on them) again for up to this long without asking the database; `feed`'s answers and the Mastodon API's newest pages likewise, shared by the workers of one server (each made again after between three quarters of this and all of it, so that answers made together are not made again together; a polled home is made again shortly before that by the server's answer refresher, a process beside the workers, so that no request waits for it). An upload, vote or comment through any process of this installation (they share `shared_state_file`) is visible in the next stream at once; a change made behind its back (another installation, the PHP version, an SQL console) shows within this time. 0 = always query."),
        Setting("stream_answer_file", .text(\.streamAnswerFile),
                "keep the full `stream`'s answer (the 2012 app's newest 50 photos) in this file, for nginx to answer the app's plain `stream` from it without asking the server (deploy/nginx/ireporter-stream-answer.conf, with Debian's libnginx-mod-http-lua): the directory must be the server's to write and nginx's to read, e.g. `/run/ireporter/stream-answer`. Every upload, deletion, vote or comment removes it before it is answered, and counts the removal in `<file>.epoch`, by which nginx's workers drop their copies; it is made again by the next `stream` and, while nginx reads it, by the answer refresher before it ends, `stream_cache_ms` after it was made. With `redis` (several hosts), a change on any host removes every host's file before it is answered (each host's answer refresher listens for changes in Redis; while it cannot, its host keeps no file). Off with `stream_cache_ms = 0` and with `db_replicas`. Empty = none."),
        Setting("search_cache_ms", .number(\.searchCacheMillis, 0...3_600_000),
                "each worker keeps its recent `search` and Flickr list answers (the photos found, up to 512 questions, and the rendered answers, up to 4 MiB) for up to this long. An upload, deletion, vote or comment through any process of this installation (they share `shared_state_file`) makes every worker ask the database again at once; a change made behind its back (the PHP version, whose uploads `ireporter search-index` indexes; an SQL console) shows within this time. 0 = no cache."),
        Setting("comment_rate_limit", .number(\.commentRateLimit, 0...1_000_000),
                "comments per user per hour; 0 = no limit."),
        Setting("vote_rate_limit", .number(\.voteRateLimit, 0...1_000_000),
                "likes, dislikes and unvotes per user per hour; 0 = no limit."),
        Setting("follow_rate_limit", .number(\.followRateLimit, 0...1_000_000),
                "follows and unfollows per user per hour (each new follow notifies its followee); 0 = no limit."),
        Setting("follow_limit", .number(\.followLimit, 0...1_000_000),
                "accounts one user may follow at once (Mastodon's own limit is 7,500); a follow beyond it is refused with \"You cannot follow more than N accounts\". It bounds the home `feed`'s work, one statement per 32 accounts followed. 0 = no limit."),
        Setting("live_publish_url", .text(\.livePublishURL),
                "announce each new photo to nginx's Nchan publisher location at this `http://HOST[:PORT]/PATH` (deploy/nginx/ireporter-live.conf; loopback), whose subscribers get it at once; empty = no live stream (clients poll `stream` with `since`)."),
        Setting("public_url", .publicURL,
                "the address clients reach this site at, e.g. `https://photos.example.com/` (the web client's page; the API is its `iReporter/`): the absolute URLs in the Flickr-compatible answers (photo sizes, photo and profile pages) begin with it. Empty: the web server's own name for the site, `SERVER_NAME` with `SERVER_PORT` and `HTTPS` (nginx's `server_name`; Apache's `ServerName` only with `UseCanonicalName On`, else Apache passes the Host header there: set `public_url`), never the request's Host header."),
        Setting("live_publish_key", .text(\.livePublishKey),
                "sent with each announcement (header `X-IReporter-Publish-Key`); nginx's publisher location accepts only this key (deploy/nginx/ireporter-live.conf), so that no one else can send every subscriber a photo (behind a proxy on the same host everyone arrives from loopback). Letters, digits, `-`, `_`, `.`, at least 16 of them; without one there is no live stream."),
        Setting("registration_limit", .number(\.registrationLimit, 1...1_000_000),
                "registrations from one network (an IPv4 address, an IPv6 /64) in an hour before each further one waits, 1 s doubling up to 15 minutes (docs/SECURITY.md); a school or an office whose people all come from one address may need more."),
        Setting("mastodon_rate_limit", .number(\.mastodonRateLimit, 0...1_000_000),
                "requests to the Mastodon-compatible API per account (per address without a token or with an app's own) in 5 minutes, Mastodon's 300 by default; past it the answer is 429 until the window ends (`X-RateLimit-*` headers, docs/API.md). 0 = no limit."),
        Setting("oauth_token_lifetime_days", .number(\.oauthTokenLifetimeDays, 0...36_500),
                "days an OAuth access token of the Mastodon-compatible API lasts; 0 = until it is revoked (Mastodon's way: a phone stays signed in)."),
        Setting("preview_rate_limit", .number(\.previewRateLimit, 0...1_000_000),
                "`preview`s and Mastodon API media uploads per user per hour, together (each is a decode of up to `max_image_pixels`, "
                    + "whatever becomes of it); 0 = no limit."),
        Setting("export_rate_limit", .number(\.exportRateLimit, 0...1_000_000),
                "`export`s per user per hour (each reads every photo of the account into a zip, and the account's comments and votes from tables without an index for them); 0 = no limit."),
        Setting("flickr_api_keys", .text(\.flickrAPIKeys),
                "the api_key values the Flickr-compatible REST endpoint accepts (comma-separated; the `api_key` parameter or the OAuth consumer key of a signed request). Empty = any key, or none."),
        Setting("max_upload_bytes", .number(\.maxUploadBytes, 1024...(1 << 31)),
                "largest photo accepted (bytes); a larger one is answered with a JSON error."),
        Setting("max_image_pixels", .number(\.maxImagePixels, 1...1_000_000_000),
                "largest photo accepted in pixels (width x height), checked from the header before decoding."),
        Setting("max_decode_memory_mib", .number(\.maxDecodeMemoryMiB, 16...65536),
                "memory one decode may take for a progressive (or multi-scan) JPEG, which libjpeg must hold whole: 2 bytes per pixel and colour channel (less with chroma subsampling), computed from the header before decoding; a larger one is refused as having too many pixels. The default takes a 12 MP photo in any layout (about 34 MiB for a phone's 4:2:0 colour, 92 MiB for CMYK); baseline photos are decoded a few rows at a time and need none of it. An upload with an effect keeps its working copies (12 bytes a pixel) within it too: a photo whose copies would take more is stored smaller, at the largest scale of 7/8, 6/8, 5/8, 4/8, 2/8 or 1/8 that fits (the default keeps a 12 MP photo at 7/8)."),
        Setting("image_decode_concurrency", .number(\.imageDecodeConcurrency, 0...DecodeGate.maxSlots),
                "image decodes at once by all the workers together (JPEGs, and the PNG or HEIC conversions of the Mastodon API's media); 0 = the number of CPUs. The others wait their turn, so uploads take at most this many times `max_decode_memory_mib` (a conversion: about 8 bytes a pixel, up to `max_image_pixels`), whatever `workers` is."),
        Setting("pid_file", .text(\.pidFile),
                "write the process id here once listening; removed at the stop while it still names this server (not once a second one, started for an upgrade, has written its own)."),
        Setting("user", .text(\.user),
                "when started as root: switch to this user (and its group) after opening the socket."),
    ]

    /// The Markdown reference table of docs/CONFIGURATION.md.
    static func referenceTable() -> String {
        let rows = settings.map { setting in
            let value = setting.defaultText.isEmpty ? "*(empty)*" : "`\(setting.defaultText)`"
            let range = setting.rule.range.map { " Range: \($0.lowerBound)-\($0.upperBound)." } ?? ""
            return "| `\(setting.key)` | \(value) | \(setting.doc)\(range) |"
        }
        return (["| key | default | meaning |", "|---|---|---|"] + rows).map { $0 + "\n" }.joined()
    }

    /// Defaults, then the file, then `IREPORTER_*` variables, then flags.
    public static func load(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Configuration {
        var configuration = Configuration()
        var flags: [(String, String)] = []
        var file = environment["IREPORTER_CONFIG"]
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            let equals = argument.firstIndex(of: "=")
            let name = equals.map { String(argument[..<$0]) } ?? argument
            let inlineValue = equals.map { String(argument[argument.index(after: $0)...]) }
            guard let value = inlineValue ?? iterator.next() else { throw ConfigurationError("\(name) needs a value") }
            switch name {
            case "--config": file = value
            case "--listen": flags.append(("listen", value))
            case "--workers": flags.append(("workers", value))
            default: throw ConfigurationError("unknown option \(name) (see --help)")
            }
        }
        if file == nil {
            // The LAMP drop-in: `ireporter.conf` beside the binary (index.fcgi).
            let besideBinary = executableDirectory().map { "\($0)/ireporter.conf" }
            file = [besideBinary, "/etc/ireporter/ireporter.conf"].compactMap { $0 }.first { access($0, R_OK) == 0 }
        }
        configuration.sourceFile = file
        var problems: [String] = []
        if let file {
            do {
                let contents = try Self.readFile(file)
                var lineProblems = contents.malformedLines.map { ($0, "expected key = value") }
                for (line, key, value) in contents.entries {
                    do { try configuration.set(key, value) } catch { lineProblems.append((line, error.description)) }
                }
                problems += lineProblems.sorted { $0.0 < $1.0 }.map { "\(file):\($0.0): \($0.1)" }
            } catch {
                problems.append(error.description)
            }
        }
        configuration.unknownVariables = unknownVariableWarnings(environment)
        for setting in settings {
            let name = "IREPORTER_" + setting.key.uppercased()
            guard let value = environment[name] else { continue }
            do { try setting.apply(value, to: &configuration) } catch { problems.append("\(name): \(error)") }
        }
        for (key, value) in flags {
            do { try configuration.set(key, value) } catch { problems.append("--\(key): \(error)") }
        }
        if configuration.photoBackend == .s3 && configuration.s3 == nil {
            problems.append("photo_store = s3 needs s3_url")
        }
        if configuration.sessionBackend == .redis && configuration.redis == nil {
            problems.append("session_store = redis needs redis_url")
        }
        guard problems.isEmpty else { throw ConfigurationError(problems.joined(separator: "\n")) }
        return configuration
    }

    /// `IREPORTER_*` variables that are no setting: warned about (another
    /// program may use the prefix too), with the setting a typo probably meant.
    static func unknownVariableWarnings(_ environment: [String: String]) -> [String] {
        let known = settings.map { "IREPORTER_" + $0.key.uppercased() } + ["IREPORTER_CONFIG"]
        return environment.keys.filter { $0.hasPrefix("IREPORTER_") && !known.contains($0) }.sorted().map { name in
            "\(name) is no setting: ignored"
                + (nearest(to: name, among: known).map { " (did you mean \($0)?)" } ?? " (docs/CONFIGURATION.md lists them)")
        }
    }

    /// The file's `key = value` lines with their numbers, and the numbers of the lines that are neither that nor a comment.
    static func readFile(_ path: String) throws(ConfigurationError) -> (entries: [(Int, String, String)], malformedLines: [Int]) {
        guard let handle = fopen(path, "r") else {
            throw ConfigurationError("\(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(handle) }
        var entries: [(Int, String, String)] = []
        var malformedLines: [Int] = []
        var lineNumber = 0
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), handle) != nil {
            lineNumber += 1
            var line = String(cBuffer: buffer)
            if let hash = line.firstIndex(of: "#") { line = String(line[..<hash]) }
            let trimmed = line.trimmingSpaces
            guard !trimmed.isEmpty else { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                malformedLines.append(lineNumber)
                continue
            }
            entries.append((lineNumber, String(trimmed[..<equals]).trimmingSpaces,
                            String(trimmed[trimmed.index(after: equals)...]).trimmingSpaces))
        }
        return (entries, malformedLines)
    }

    /// The Redis to connect to, with the configured timeout; nil: none.
    var redisSettings: RedisSettings? {
        redis.map { settings in
            var settings = settings
            settings.timeoutMillis = redisTimeoutMillis
            return settings
        }
    }

    /// The bucket to connect to, with the configured timeout; nil: none.
    var s3Settings: S3Settings? {
        s3.map { settings in
            var settings = settings
            settings.timeoutMillis = s3TimeoutMillis
            return settings
        }
    }

    /// The connection settings of replica `index` of `db_replicas`.
    func replicaSettings(_ index: Int) -> DatabaseSettings {
        var settings = database
        (settings.host, settings.port, settings.socket, settings.nodes) = (replicas[index].host, replicas[index].port, nil, [])
        settings.partsInURL.formUnion([.host, .port]) // the replica's, never an option file's
        return settings
    }

    /// Where the shared state lives (`shared_state_file`).
    public var sharedStatePath: String {
        sharedStateFile.isEmpty ? "\(sessionDirectory)/ireporter-shared-state" : sharedStateFile
    }

    mutating func set(_ key: String, _ value: String) throws(ConfigurationError) {
        guard let setting = Self.settings.first(where: { $0.key == key }) else {
            throw ConfigurationError("unknown setting \"\(key)\""
                                     + (nearest(to: key, among: Self.settings.map(\.key)).map { " (did you mean \($0)?)" } ?? ""))
        }
        try setting.apply(value, to: &self)
    }
}

/// The directory of the running binary (from /proc/self/exe).
func executableDirectory() -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard length > 0 else { return nil }
    let path = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return path.lastIndex(of: "/").map { String(path[..<$0]) }
}

extension StringProtocol {
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
