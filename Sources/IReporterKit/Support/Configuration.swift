#if canImport(Glibc)
import Glibc
#endif

public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Every setting, with its default (docs/CONFIGURATION.md lists them).
public struct Configuration: Sendable {
    public var listen = ""
    public var listenMode: mode_t = 0o660
    public var listenBacklog: Int32 = 511
    public var workers = 4
    public var database = DatabaseSettings()
    public var uploadDirectory = "/var/www/iReporter/upload"
    public var sessionDirectory = "/var/lib/php/sessions"
    public var sessionIdleTimeout = 7 * 24 * 3600
    public var maxUploadBytes = 20 * 1024 * 1024
    public var maxImagePixels = 50_000_000
    public var pidFile = ""
    public var user = ""
    public var listenOwner = ""
    public var listenGroup = ""
    public var maxRequests = 0
    public var requestTimeout = 120
    public var shutdownTimeout = 30
    public var slowRequestMillis = 0
    public var accessLog = ""
    public var logFile = ""
    public var pingPath = "/ireporter-ping"
    public var statusPath = "/ireporter-status"
    public var uploadRateLimit = 120
    public var streamCacheMillis = 1000
    public var passwordHashing = PasswordHasher.Parameters()
    /// Argon2 hashes computed at once across the workers; 0 = the number of CPUs.
    public var passwordHashConcurrency = 0
    public var sessionAbsoluteTimeout = 30 * 24 * 3600
    /// `Secure` on the session cookie: always, or only for HTTPS requests.
    public var cookieSecureAlways = false
    /// Where the settings came from (for messages).
    public var sourceFile: String?

    public init() {}

    public static let keys = ["listen", "listen_mode", "listen_backlog", "workers", "db_url", "db_charset",
                              "upload_dir", "session_dir", "session_idle_timeout", "max_upload_bytes",
                              "max_image_pixels", "pid_file", "user", "listen_owner", "listen_group",
                              "max_requests", "request_timeout", "shutdown_timeout", "slow_request_ms",
                              "access_log", "log_file", "ping_path", "status_path", "upload_rate_limit",
                              "password_hash_memory_kib", "password_hash_iterations", "password_hash_parallelism",
                              "password_hash_concurrency",
                              "session_absolute_timeout", "cookie_secure", "stream_cache_ms", "db_option_file",
                              "db_option_group"]

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
                for (line, key, value) in try Self.readFile(file) {
                    do { try configuration.set(key, value) } catch { problems.append("\(file):\(line): \(error)") }
                }
            } catch {
                problems.append(error.description)
            }
        }
        for key in keys {
            guard let value = environment["IREPORTER_" + key.uppercased()] else { continue }
            do { try configuration.set(key, value) } catch { problems.append("IREPORTER_\(key.uppercased()): \(error)") }
        }
        for (key, value) in flags {
            do { try configuration.set(key, value) } catch { problems.append("--\(key): \(error)") }
        }
        guard problems.isEmpty else { throw ConfigurationError(problems.joined(separator: "\n")) }
        return configuration
    }

    static func readFile(_ path: String) throws(ConfigurationError) -> [(Int, String, String)] {
        guard let handle = fopen(path, "r") else {
            throw ConfigurationError("\(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(handle) }
        var entries: [(Int, String, String)] = []
        var lineNumber = 0
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), handle) != nil {
            lineNumber += 1
            var line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let hash = line.firstIndex(of: "#") { line = String(line[..<hash]) }
            let trimmed = line.trimmingSpaces
            guard !trimmed.isEmpty else { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw ConfigurationError("\(path):\(lineNumber): expected key = value")
            }
            entries.append((lineNumber, String(trimmed[..<equals]).trimmingSpaces,
                            String(trimmed[trimmed.index(after: equals)...]).trimmingSpaces))
        }
        return entries
    }

    mutating func set(_ key: String, _ value: String) throws(ConfigurationError) {
        func number(_ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
            guard let number = Int(value), range.contains(number) else {
                throw ConfigurationError("\(key) must be a whole number in \(range.lowerBound)...\(range.upperBound), not \"\(value)\"")
            }
            return number
        }
        switch key {
        case "listen": listen = value
        case "listen_mode":
            guard let mode = mode_t(value, radix: 8), mode <= 0o777 else {
                throw ConfigurationError("listen_mode must be octal like 0660, not \"\(value)\"")
            }
            listenMode = mode
        case "listen_backlog": listenBacklog = Int32(try number(1...65535))
        case "workers": workers = try number(1...256)
        case "db_url":
            let previous = database
            database = try DatabaseSettings(url: value)
            if !value.contains("charset=") { database.charset = previous.charset }
            (database.optionFile, database.optionGroup) = (previous.optionFile, previous.optionGroup)
        case "db_charset": database.charset = value
        case "db_option_file":
            guard access(value, R_OK) == 0 else { throw ConfigurationError("db_option_file \(value) is not readable") }
            database.optionFile = value
        case "db_option_group": database.optionGroup = value
        case "upload_dir": uploadDirectory = value
        case "session_dir": sessionDirectory = value
        case "session_idle_timeout": sessionIdleTimeout = try number(60...(10 * 365 * 86400))
        case "max_upload_bytes": maxUploadBytes = try number(1024...(1 << 31))
        case "max_image_pixels": maxImagePixels = try number(1...1_000_000_000)
        case "pid_file": pidFile = value
        case "user": user = value
        case "listen_owner": listenOwner = value
        case "listen_group": listenGroup = value
        case "max_requests": maxRequests = try number(0...1_000_000_000)
        case "request_timeout": requestTimeout = try number(0...86400)
        case "shutdown_timeout": shutdownTimeout = try number(0...3600)
        case "slow_request_ms": slowRequestMillis = try number(0...3_600_000)
        case "access_log": accessLog = value
        case "log_file": logFile = value
        case "ping_path": pingPath = value
        case "status_path": statusPath = value
        case "upload_rate_limit": uploadRateLimit = try number(0...1_000_000)
        case "stream_cache_ms": streamCacheMillis = try number(0...3_600_000)
        case "password_hash_memory_kib": passwordHashing.memoryKiB = UInt32(try number(8...(4 * 1024 * 1024)))
        case "password_hash_iterations": passwordHashing.iterations = UInt32(try number(1...64))
        case "password_hash_parallelism": passwordHashing.parallelism = UInt32(try number(1...16))
        case "password_hash_concurrency": passwordHashConcurrency = try number(0...HashingGate.maxSlots)
        case "session_absolute_timeout": sessionAbsoluteTimeout = try number(60...(10 * 365 * 86400))
        case "cookie_secure":
            guard value == "auto" || value == "always" else {
                throw ConfigurationError("cookie_secure must be auto or always, not \"\(value)\"")
            }
            cookieSecureAlways = value == "always"
        default: throw ConfigurationError("unknown setting \"\(key)\"")
        }
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
