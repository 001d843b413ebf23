#if canImport(Glibc)
import Glibc
#endif

public enum IReporterCommandLine {
    static let usage = """
        usage: ireporter [--config FILE] [--listen ADDRESS] [--workers N]
               ireporter --check-config [--config FILE]
               ireporter migrate-passwords [--config FILE]
               ireporter repair [--dry-run] [--grace SECONDS] [--config FILE]
               ireporter search-index [--restart] [--config FILE]
               ireporter --help | --version

        The iReporter photo API as a FastCGI server. It listens on ADDRESS
        (a unix socket path or HOST:PORT), or on the socket it inherits on
        fd 0 when started by spawn-fcgi, Apache mod_fcgid or systemd.
        Settings come from FILE (default: ireporter.conf beside the binary,
        else /etc/ireporter/ireporter.conf), then IREPORTER_* environment
        variables, then the flags above; every setting is listed in
        docs/CONFIGURATION.md.

        repair clears what a crash can leave behind: spool files, photo files
        without a row, rows without a photo file; it makes missing thumbnails
        again. Files younger than --grace seconds (default 60) are left alone.
        A start of the server does the same, except deleting rows.

        migrate-passwords widens login.pass (sql/migrations/001-widen-pass.sql)
        and replaces every password stored as the app sent it by its Argon2id
        hash, in place; accounts keep logging in with what the app sends.

        search-index fills the search index (sql/migrations/005) for photos
        stored before it existed or by another server, in batches, from where
        the last run stopped (--restart: from the first photo). Safe to run,
        stop and run again while the server serves.

        """

    /// Runs the command line; returns the exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") { print(usage, terminator: ""); return 0 }
        if arguments.contains("--version") { print("ireporter \(Server.version)"); return 0 }
        let checkOnly = arguments.contains("--check-config")
        let subcommand = ["migrate-passwords", "repair", "search-index"].first { $0 == arguments.first }
        var options = arguments.filter { $0 != "--check-config" }
        if subcommand != nil { options.removeFirst() }
        let dryRun = options.contains("--dry-run")
        let restart = options.contains("--restart")
        options.removeAll { $0 == "--dry-run" || $0 == "--restart" }
        var grace = 60
        if let index = options.firstIndex(of: "--grace"), index + 1 < options.count, let value = Int(options[index + 1]) {
            grace = value
            options.removeSubrange(index...(index + 1))
        }
        let configuration: Configuration
        do {
            configuration = try Configuration.load(arguments: options, environment: environment())
        } catch {
            Log.error("configuration:\n\(error)")
            return 2
        }
        switch subcommand {
        case "migrate-passwords": return PasswordMigration.run(configuration)
        case "repair": return runRepair(configuration, graceSeconds: grace, dryRun: dryRun)
        case "search-index": return runSearchIndex(configuration, restart: restart)
        default: break
        }
        if checkOnly {
            print("configuration OK" + (configuration.sourceFile.map { " (\($0))" } ?? " (no file)"))
            return 0
        }
        let reloadArguments = arguments
        return Server.run(configuration) { () throws(ConfigurationError) -> Configuration in
            try Configuration.load(arguments: reloadArguments, environment: environment())
        }
    }

    private static func runRepair(_ configuration: Configuration, graceSeconds: Int, dryRun: Bool) -> Int32 {
        DatabaseConnection.initializeLibrary()
        let repair = configuration.uploadRepair()
        do {
            let report = try repair.run(graceSeconds: graceSeconds, deleteRows: true, dryRun: dryRun)
            print((dryRun ? "would have " : "") + report.description)
            for name in report.removedSpools + report.removedOrphanFiles { print("  removed \(name)") }
            for id in report.regeneratedThumbnails { print("  made thumbnail \(id)-thumb.jpg") }
            for id in report.deletedRows { print("  deleted row IdPhoto \(id) (no photo file)") }
            return 0
        } catch {
            Log.error("repair: \(error)")
            return 1
        }
    }

    private static func runSearchIndex(_ configuration: Configuration, restart: Bool) -> Int32 {
        DatabaseConnection.initializeLibrary()
        let backfill = MariaDBSearchBackfill(database: DatabaseConnection(settings: configuration.database))
        do {
            if restart { try backfill.restart() }
            let total = try backfill.run { total, next in
                if total % 10_000 < 500 { print("indexed \(total) photos, next IdPhoto \(next)") }
            }
            print("search index complete: \(total) photos indexed in this run")
            return 0
        } catch {
            Log.error("search-index: \(error)")
            return 1
        }
    }

    private static func environment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
