#if canImport(Glibc)
import Glibc
#endif

public enum IReporterCommandLine {
    /// Exit statuses: done, failed (what the command tried did not work), and
    /// a command line or configuration that cannot be used.
    static let succeeded: Int32 = 0, failed: Int32 = 1, usageError: Int32 = 2

    static var usage: String {
        let width = Subcommand.allCases.map(\.name.count).max() ?? 0
        let commands = Subcommand.allCases.map { command in
            "  " + command.name + String(repeating: " ", count: width - command.name.count + 2) + command.summary
        }.joined(separator: "\n")
        // One usage line per command (faults/run.py looks for `ireporter repair` here).
        let usages = Subcommand.allCases.filter { $0 != .help }.map { "       " + $0.usage }.joined(separator: "\n")
        return """
            usage: ireporter [--config FILE] [--listen ADDRESS] [--workers N]
                   ireporter --check-config [--config FILE]
            \(usages)
                   ireporter help [COMMAND] | COMMAND --help | --help | --version

            The iReporter photo API as a FastCGI server. It listens on ADDRESS
            (a unix socket path or HOST:PORT), or on the socket it inherits on
            fd 0 when started by spawn-fcgi, Apache mod_fcgid or systemd.
            Settings come from FILE (default: ireporter.conf beside the binary,
            else /etc/ireporter/ireporter.conf), then IREPORTER_* environment
            variables, then the flags above; every setting is listed in
            docs/CONFIGURATION.md. --check-config reads them, reports every
            problem and starts nothing (`ireporter check` tries them).

            Commands:
            \(commands)

            Exit status: 0 done, 1 failed (--check-config: the problems it
            reported), 2 a command line or configuration that cannot be used,
            130 stopped by Ctrl-C (the long commands go on where they stopped
            when run again).

            """
    }

    /// What the command line asks for.
    struct Invocation: Equatable {
        /// nil: the server.
        var command: Subcommand?
        var help = false
        var version = false
        var checkConfig = false
        /// `help COMMAND`'s command.
        var helpTopic: Subcommand?
        var flags: Set<String> = []
        var values: [String: String] = [:]
        /// --config, --listen, --workers with their values, for Configuration.load.
        var configurationArguments: [String] = []
    }

    struct UsageError: Error, Equatable {
        let message: String
    }

    static let configurationOptions = ["--config", "--listen", "--workers"]

    /// The command may stand before or after the options (`ireporter --config FILE repair`).
    static func parse(_ arguments: [String]) -> Result<Invocation, UsageError> {
        var invocation = Invocation()
        var commandOptions: [String] = []
        let valueOptions = Set(Subcommand.allCases.flatMap(\.valueOptions))
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            let hasInlineValue = argument.contains("=") && argument.hasPrefix("--")
            switch name {
            case "--help", "-h": invocation.help = true
            case "--version": invocation.version = true
            case "--check-config": invocation.checkConfig = true
            case _ where configurationOptions.contains(name) || valueOptions.contains(name):
                let value: String
                if hasInlineValue {
                    value = String(argument.dropFirst(name.count + 1))
                } else {
                    guard let next = iterator.next() else { return .failure(UsageError(message: "\(name) needs a value")) }
                    value = next
                }
                if configurationOptions.contains(name) {
                    invocation.configurationArguments += [name, value]
                } else {
                    commandOptions.append(name)
                    invocation.values[name] = value
                }
            case _ where argument.hasPrefix("-"):
                commandOptions.append(argument)
            default:
                if invocation.command == nil {
                    guard let command = Subcommand(rawValue: argument) else {
                        return .failure(UsageError(message: Subcommand.unknown(argument)))
                    }
                    invocation.command = command
                } else if invocation.command == .help && invocation.helpTopic == nil {
                    guard let topic = Subcommand(rawValue: argument) else {
                        return .failure(UsageError(message: Subcommand.unknown(argument)))
                    }
                    invocation.helpTopic = topic
                } else {
                    return .failure(UsageError(message: "unexpected argument '\(argument)' (ireporter --help)"))
                }
            }
        }
        let command = invocation.command
        for option in commandOptions {
            let allowed = (command?.flags ?? []) + (command?.valueOptions ?? [])
            guard allowed.contains(option) else {
                return .failure(UsageError(message: "unknown option \(option)"
                                           + (command.map { " for \($0.name) (ireporter \($0.name) --help)" } ?? " (ireporter --help)")))
            }
            if !(command?.valueOptions.contains(option) ?? false) { invocation.flags.insert(option) }
        }
        if invocation.checkConfig && command != nil && !invocation.help {
            return .failure(UsageError(message: "--check-config is the server's (ireporter --check-config [--config FILE])"))
        }
        if let grace = invocation.values["--grace"], Int(grace) == nil {
            return .failure(UsageError(message: "--grace needs a whole number of seconds, not '\(grace)'"))
        }
        return .success(invocation)
    }

    /// Runs the command line; returns the exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        let invocation: Invocation
        switch parse(arguments) {
        case .success(let parsed): invocation = parsed
        case .failure(let error):
            Log.error(error.message)
            return usageError
        }
        if invocation.version { print("ireporter \(Server.version)"); return succeeded }
        if invocation.help || invocation.command == .help {
            print((invocation.helpTopic ?? (invocation.command == .help ? nil : invocation.command))?.helpText ?? usage,
                  terminator: "")
            return succeeded
        }
        let variables = environment()
        let configuration: Configuration
        do {
            configuration = try Configuration.load(arguments: invocation.configurationArguments, environment: variables)
        } catch {
            if invocation.checkConfig {
                for warning in Configuration.unknownVariableWarnings(variables) { Log.warning(warning) }
                Log.error("configuration NOT OK\(configurationSource(invocation)):\n\(error)")
                return failed
            }
            Log.error("configuration:\n\(error)")
            return usageError
        }
        Log.configure(level: configuration.logLevel, format: configuration.logFormat)
        guard let command = invocation.command else {
            // (not at every request of a CGI program)
            if invocation.checkConfig || !CGIRequest.isCGI { for warning in configuration.warnings { Log.warning(warning) } }
            if invocation.checkConfig {
                print("configuration OK" + (configuration.sourceFile.map { " (\($0))" } ?? " (no file)"))
                return succeeded
            }
            let reloadArguments = invocation.configurationArguments
            return Server.run(configuration) { () throws(ConfigurationError) -> Configuration in
                try Configuration.load(arguments: reloadArguments, environment: Self.environment())
            }
        }
        return run(command, invocation, configuration)
    }

    private static func configurationSource(_ invocation: Invocation) -> String {
        guard let index = invocation.configurationArguments.firstIndex(of: "--config") else { return "" }
        return " (\(invocation.configurationArguments[index + 1]))"
    }

    private static func run(_ command: Subcommand, _ invocation: Invocation, _ configuration: Configuration) -> Int32 {
        let flags = invocation.flags
        switch command {
        case .check: return ConfigurationCheck(configuration).run()
        case .migrate: return runMigrations(configuration)
        case .migratePasswords: return PasswordMigration.run(configuration)
        case .repair:
            var actions = flags.contains("--yes") ? PhotoRepair.Actions.all(force: flags.contains("--force"))
                                                  : PhotoRepair.Actions(force: flags.contains("--force"))
            if flags.contains("--dry-run") { actions = .dryRun }
            return runRepair(configuration, graceSeconds: invocation.values["--grace"].flatMap { Int($0) } ?? 60,
                             actions: actions)
        case .searchIndex: return runSearchIndex(configuration, restart: flags.contains("--restart"))
        case .duplicateUsernames: return runDuplicateUsernames(configuration, rename: flags.contains("--rename"))
        case .convertInnoDB: return runInnoDBConversion(configuration, dryRun: flags.contains("--dry-run"))
        case .copyPhotosToS3: return runCopyToBucket(configuration)
        case .help: return succeeded
        }
    }

    private static func runRepair(_ configuration: Configuration, graceSeconds: Int, actions: PhotoRepair.Actions) -> Int32 {
        DatabaseConnection.initializeLibrary()
        let progress = TaskProgress("repair")
        let report: PhotoRepair.Report
        do {
            report = try configuration.uploadRepair().run(graceSeconds: graceSeconds, actions: actions, progress: progress)
        } catch let stopped as PhotoRepair.Stopped {
            TaskProgress.say(stopped.report.summary)
            TaskProgress.say(progress.stoppedMessage("in the middle of its steps"))
            return TaskProgress.stoppedStatus
        } catch {
            Log.error("repair: \(error)")
            return 1
        }
        TaskProgress.say(report.summary)
        func list<T>(_ items: [T], _ what: String, _ step: PhotoRepair.Step, done: String, notDone: String) {
            guard !items.isEmpty else { return }
            let shown = items.prefix(50).map { "\($0)" }.joined(separator: " ")
            TaskProgress.say("  \(report.applied.contains(step) ? done : notDone) \(what): \(shown)"
                             + (items.count > 50 ? " ... and \(items.count - 50) more" : ""))
        }
        list(report.spools, "spool files", .spools, done: "removed", notDone: "would remove")
        list(report.missingThumbnails, "thumbnails of IdPhoto", .thumbnails, done: "made", notDone: "would make")
        list(report.filesWithoutRow, "files without a row (to \(PhotoRepair.removedFolder)/)", .files,
             done: "moved", notDone: "would move")
        list(report.rowsWithoutPhoto, "rows without a photo file (to photos_removed), IdPhoto", .rows,
             done: "moved", notDone: "would move")
        if !report.lostOriginals.isEmpty {
            // Not a step: nothing here can bring a photo back.
            let shown = report.lostOriginals.prefix(50).map(String.init).joined(separator: " ")
            TaskProgress.say("  cannot repair photos whose original is gone (kept as they are; their sizes answer 404 "
                             + "until <IdPhoto>.jpg or its photos/..._o.jpg is restored from a backup), IdPhoto: \(shown)"
                             + (report.lostOriginals.count > 50 ? " ... and \(report.lostOriginals.count - 50) more" : ""))
        }
        if let refusal = report.refusal {
            Log.error("repair refused, nothing changed: \(refusal). Check upload_dir and db_url; "
                      + "if they are right, `ireporter repair --force` goes on all the same")
            return 1
        }
        if (!report.filesWithoutRow.isEmpty && !report.applied.contains(.files))
            || (!report.rowsWithoutPhoto.isEmpty && !report.applied.contains(.rows)) {
            TaskProgress.say("nothing was moved aside: `ireporter repair --yes` does it (restorable: docs/RELIABILITY.md)")
        }
        if report.orphanReactions > 0 && !report.applied.contains(.reactions) {
            TaskProgress.say(PhotoRepair.keptReactionsAdvice)
        }
        return 0
    }

    private static func runMigrations(_ configuration: Configuration) -> Int32 {
        DatabaseConnection.initializeLibrary()
        let progress = TaskProgress("migrate")
        let database = DatabaseConnection(settings: configuration.database, reportsProgress: true)
        var refused = 0
        do {
            // Else a migration of the 2012 tables fails, and one that makes its
            // own table before filling it from them reads "already applied" later.
            let missing = try SchemaMigration.missingBaseTables(on: database)
            guard missing.isEmpty else {
                Log.error("migrate: nothing applied: the tables \(missing.joined(separator: ", ")) are missing; "
                          + "load sql/schema.sql or the PHP version's dump first (README, \"Migrations\")")
                return 1
            }
            for migration in SchemaMigration.all {
                let started = MonotonicClock().now
                let outcome: SchemaMigration.Outcome
                do {
                    outcome = try migration.apply(on: database, progress: progress)
                } catch where !error.isConnectionLost {
                    // MariaDB refused a statement (an older server, a table of another shape): the others stand alone.
                    TaskProgress.say("\(migration.name): NOT applied: \(error)")
                    refused += 1
                    continue
                }
                switch outcome {
                case .alreadyApplied:
                    TaskProgress.say("\(migration.name): already applied")
                case .applied:
                    TaskProgress.say("\(migration.name): applied in \(MonotonicClock().now.millis(since: started) / 1000) s")
                case .stopped:
                    TaskProgress.say(progress.stoppedMessage("\(migration.name) not applied: the server undid it"))
                    return TaskProgress.stoppedStatus
                case .refused(let reason):
                    // The others stand alone: they are still applied.
                    TaskProgress.say("\(migration.name): NOT applied: \(reason)")
                    refused += 1
                }
            }
            return refused == 0 ? 0 : 1
        } catch {
            Log.error("migrate: \(error)")
            return 1
        }
    }

    private static func runDuplicateUsernames(_ configuration: Configuration, rename: Bool) -> Int32 {
        DatabaseConnection.initializeLibrary()
        let duplicates = DuplicateUsernames(database: DatabaseConnection(settings: configuration.database))
        do {
            guard rename else {
                let groups = try duplicates.list()
                for group in groups {
                    print("\(DuplicateUsernames.describe([group])): the oldest keeps the name; "
                          + "--rename renames \(group.accounts.dropFirst().map { "\($0)" }.joined(separator: ", "))")
                }
                print("\(groups.count) usernames held by several accounts")
                return 0
            }
            let outcome = try duplicates.renameYounger()
            for renaming in outcome.renamed {
                print("IdUser \(renaming.account): \"\(String(decoding: renaming.from, as: UTF8.self))\" renamed "
                      + "\"\(String(decoding: renaming.to, as: UTF8.self))\"")
            }
            for renaming in outcome.refused {
                print("IdUser \(renaming.account): NOT renamed, \"\(String(decoding: renaming.to, as: UTF8.self))\" is taken: "
                      + "rename it by hand (UPDATE login SET username = … WHERE IdUser = \(renaming.account))")
            }
            print("\(outcome.renamed.count) accounts renamed, \(outcome.refused.count) left")
            return outcome.refused.isEmpty ? 0 : 1
        } catch {
            Log.error("duplicate-usernames: \(error)")
            return 1
        }
    }

    private static func runInnoDBConversion(_ configuration: Configuration, dryRun: Bool) -> Int32 {
        DatabaseConnection.initializeLibrary()
        let progress = TaskProgress("convert-innodb")
        let conversion = InnoDBConversion(database: DatabaseConnection(settings: configuration.database, reportsProgress: true))
        do {
            let tables = try conversion.tablesToConvert()
            for table in tables {
                if dryRun {
                    print("\(table.name): would be converted to InnoDB (about \(table.rows) rows)")
                    continue
                }
                let started = MonotonicClock().now
                guard try conversion.convert(table, progress: progress) else {
                    TaskProgress.say(progress.stoppedMessage("\(table.name) not converted: the server undid it"))
                    return TaskProgress.stoppedStatus
                }
                TaskProgress.say("\(table.name): converted to InnoDB in \(MonotonicClock().now.millis(since: started) / 1000) s")
            }
            if tables.isEmpty { print("every table is InnoDB already") }
            return 0
        } catch {
            Log.error("convert-innodb: \(error)")
            return 1
        }
    }

    private static func runSearchIndex(_ configuration: Configuration, restart: Bool) -> Int32 {
        DatabaseConnection.initializeLibrary()
        let progress = TaskProgress("search-index")
        let backfill = MariaDBSearchBackfill(database: DatabaseConnection(settings: configuration.database))
        do {
            if restart { try backfill.restart() }
            let remaining = try backfill.remaining()
            var stopped = false
            let total = try backfill.run(shouldStop: {
                stopped = progress.stopRequested
                return stopped
            }, progress: { total, _ in
                progress.update("photos indexed", done: total, of: max(remaining, total))
            })
            if stopped {
                TaskProgress.say(progress.stoppedMessage("\(total) photos indexed in this run"))
                return TaskProgress.stoppedStatus
            }
            TaskProgress.say("search index complete: \(total) photos indexed in this run")
            return 0
        } catch {
            Log.error("search-index: \(error)")
            return 1
        }
    }

    private static func runCopyToBucket(_ configuration: Configuration) -> Int32 {
        guard configuration.s3 != nil else {
            Log.error("copy-photos-to-s3 needs s3_url (the bucket to copy upload_dir into)")
            return 2
        }
        let progress = TaskProgress("copy-photos-to-s3")
        let copy = FolderToBucketCopy(folder: configuration.uploadFolder, bucket: configuration.bucketStore())
        do {
            let report = try copy.run(progress: progress)
            TaskProgress.say("\(report.copied) photo files copied to \(copy.bucket.client.settings.place), "
                             + "\(report.present) there already")
            return 0
        } catch let stopped as FolderToBucketCopy.Stopped {
            TaskProgress.say(progress.stoppedMessage("\(stopped.report.copied) photo files copied in this run"))
            return TaskProgress.stoppedStatus
        } catch {
            Log.error("copy-photos-to-s3: \(error)")
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
