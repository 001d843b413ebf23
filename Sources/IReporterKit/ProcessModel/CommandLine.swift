#if canImport(Glibc)
import Glibc
#endif

public enum IReporterCommandLine {
    static let usage = """
        usage: ireporter [--config FILE] [--listen ADDRESS] [--workers N]
               ireporter --check-config [--config FILE]
               ireporter migrate [--config FILE]
               ireporter migrate-passwords [--config FILE]
               ireporter repair [--yes] [--dry-run] [--force] [--grace SECONDS] [--config FILE]
               ireporter search-index [--restart] [--config FILE]
               ireporter duplicate-usernames [--rename] [--config FILE]
               ireporter convert-innodb [--dry-run] [--config FILE]
               ireporter copy-photos-to-s3 [--config FILE]
               ireporter --help | --version

        The iReporter photo API as a FastCGI server. It listens on ADDRESS
        (a unix socket path or HOST:PORT), or on the socket it inherits on
        fd 0 when started by spawn-fcgi, Apache mod_fcgid or systemd.
        Settings come from FILE (default: ireporter.conf beside the binary,
        else /etc/ireporter/ireporter.conf), then IREPORTER_* environment
        variables, then the flags above; every setting is listed in
        docs/CONFIGURATION.md.

        repair clears what a crash can leave behind. It removes spool files
        and makes missing thumbnails, and shows what else it found: photo
        files without a row and rows without a photo file. With --yes it
        moves those aside, restorably: files into upload_dir/.removed/, rows
        into the table photos_removed. --dry-run changes nothing at all. It
        refuses when the damage looks like a wrong upload_dir, a disk that is
        not mounted or the wrong database (--force: go on all the same).
        Files younger than --grace seconds (default 60) are left alone. The
        server does the same at start and every 10 minutes, except for the
        rows.

        migrate applies sql/migrations to the database (the PHP version's
        too): 001 widens login.pass, 002 indexes login.username. Those
        already applied are skipped.

        migrate-passwords widens login.pass (migration 001) and replaces every
        password stored as the app sent it by its Argon2id hash, in place;
        accounts keep logging in with what the app sends.

        repair, migrate and migrate-passwords show their progress; Ctrl-C
        stops them with nothing half-done, and the same command run again
        goes on where it stopped.

        duplicate-usernames lists the usernames that several accounts hold
        (an old database's; migrate refuses 007, the unique index on
        login.username, while there are any). --rename keeps each name for
        its oldest account and renames the others to NAME~IdUser.

        convert-innodb converts the tables of the PHP version's schema from
        MyISAM to InnoDB (crash-safe; a Galera cluster replicates nothing
        else). --dry-run lists them and changes nothing.

        search-index fills the search index (migration 005) for photos
        stored before it existed or by another server, in batches, from where
        the last run stopped (--restart: from the first photo). Safe to run,
        stop and run again while the server serves.

        copy-photos-to-s3 copies the photos of upload_dir (the 2012 names and
        the tree) into the bucket of s3_url, each under the key photo_store =
        s3 reads; objects already there are skipped, so it goes on where a
        run stopped and copies only what is new when run again. It deletes
        nothing (docs/SCALING.md, "Moving from a folder").

        """

    /// Runs the command line; returns the exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") { print(usage, terminator: ""); return 0 }
        if arguments.contains("--version") { print("ireporter \(Server.version)"); return 0 }
        let checkOnly = arguments.contains("--check-config")
        var options = arguments.filter { $0 != "--check-config" }
        // Before or after the options (`ireporter --config FILE repair`), never an option's value.
        let subcommandIndex = options.indices.first { index in
            ["migrate", "migrate-passwords", "repair", "search-index", "duplicate-usernames", "convert-innodb",
             "copy-photos-to-s3"].contains(options[index])
                && (index == 0 || !["--config", "--listen", "--workers", "--grace"].contains(options[index - 1]))
        }
        let subcommand = subcommandIndex.map { options.remove(at: $0) }
        var flags: Set<String> = []
        if subcommand == "repair" {
            flags = Set(options.filter { ["--yes", "--dry-run", "--force"].contains($0) })
            options.removeAll { flags.contains($0) }
        }
        let restart = subcommand == "search-index" && options.contains("--restart")
        if restart { options.removeAll { $0 == "--restart" } }
        let rename = subcommand == "duplicate-usernames" && options.contains("--rename")
        if rename { options.removeAll { $0 == "--rename" } }
        let dryRun = subcommand == "convert-innodb" && options.contains("--dry-run")
        if dryRun { options.removeAll { $0 == "--dry-run" } }
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
        case "migrate": return runMigrations(configuration)
        case "migrate-passwords": return PasswordMigration.run(configuration)
        case "repair":
            var actions = UploadRepair.Actions(setAsideFiles: flags.contains("--yes"), setAsideRows: flags.contains("--yes"),
                                               force: flags.contains("--force"))
            if flags.contains("--dry-run") { actions = .dryRun }
            return runRepair(configuration, graceSeconds: grace, actions: actions)
        case "search-index": return runSearchIndex(configuration, restart: restart)
        case "duplicate-usernames": return runDuplicateUsernames(configuration, rename: rename)
        case "convert-innodb": return runInnoDBConversion(configuration, dryRun: dryRun)
        case "copy-photos-to-s3": return runCopyToBucket(configuration)
        default: break
        }
        // (not at every request of a CGI program)
        if checkOnly || !CGIRequest.isCGI { for warning in configuration.warnings { Log.warning(warning) } }
        if checkOnly {
            print("configuration OK" + (configuration.sourceFile.map { " (\($0))" } ?? " (no file)"))
            return 0
        }
        let reloadArguments = arguments
        return Server.run(configuration) { () throws(ConfigurationError) -> Configuration in
            try Configuration.load(arguments: reloadArguments, environment: environment())
        }
    }

    private static func runRepair(_ configuration: Configuration, graceSeconds: Int, actions: UploadRepair.Actions) -> Int32 {
        DatabaseConnection.initializeLibrary()
        let progress = TaskProgress("repair")
        let report: UploadRepair.Report
        do {
            report = try configuration.uploadRepair().run(graceSeconds: graceSeconds, actions: actions, progress: progress)
        } catch let stopped as UploadRepair.Stopped {
            TaskProgress.say(stopped.report.summary)
            TaskProgress.say(progress.stoppedMessage("in the middle of its steps"))
            return TaskProgress.stoppedStatus
        } catch {
            Log.error("repair: \(error)")
            return 1
        }
        TaskProgress.say(report.summary)
        func list<T>(_ items: [T], _ what: String, _ step: UploadRepair.Step, done: String, notDone: String) {
            guard !items.isEmpty else { return }
            let shown = items.prefix(50).map { "\($0)" }.joined(separator: " ")
            TaskProgress.say("  \(report.applied.contains(step) ? done : notDone) \(what): \(shown)"
                             + (items.count > 50 ? " ... and \(items.count - 50) more" : ""))
        }
        list(report.spools, "spool files", .spools, done: "removed", notDone: "would remove")
        list(report.missingThumbnails, "thumbnails of IdPhoto", .thumbnails, done: "made", notDone: "would make")
        list(report.filesWithoutRow, "files without a row (to \(UploadRepair.removedFolder)/)", .files,
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
        return 0
    }

    private static func runMigrations(_ configuration: Configuration) -> Int32 {
        DatabaseConnection.initializeLibrary()
        let progress = TaskProgress("migrate")
        let database = DatabaseConnection(settings: configuration.database, reportsProgress: true)
        var refused = 0
        do {
            for migration in SchemaMigration.all {
                let started = monotonicMillis()
                switch try migration.apply(on: database, progress: progress) {
                case .alreadyApplied:
                    TaskProgress.say("\(migration.name): already applied")
                case .applied:
                    TaskProgress.say("\(migration.name): applied in \((monotonicMillis() - started) / 1000) s")
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
                let started = monotonicMillis()
                guard try conversion.convert(table, progress: progress) else {
                    TaskProgress.say(progress.stoppedMessage("\(table.name) not converted: the server undid it"))
                    return TaskProgress.stoppedStatus
                }
                TaskProgress.say("\(table.name): converted to InnoDB in \((monotonicMillis() - started) / 1000) s")
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
            var stopped = false
            let total = try backfill.run(shouldStop: {
                stopped = progress.stopRequested
                return stopped
            }, progress: { total, next in
                progress.update("photos indexed (next IdPhoto \(next))", done: total)
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
