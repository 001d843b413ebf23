/// The commands of `ireporter COMMAND`: each its name, its one-line summary,
/// its help (`ireporter COMMAND --help`, `ireporter help COMMAND`), the
/// options it takes and what it runs (`IReporterCommandLine`). Without a
/// command, `ireporter` is the server.
enum Subcommand: String, CaseIterable, Sendable {
    case check
    case migrate
    case migratePasswords = "migrate-passwords"
    case repair
    case searchIndex = "search-index"
    case duplicateUsernames = "duplicate-usernames"
    case convertInnoDB = "convert-innodb"
    case copyPhotosToS3 = "copy-photos-to-s3"
    case help

    var name: String { rawValue }

    /// Options without a value.
    var flags: [String] {
        switch self {
        case .repair: ["--yes", "--dry-run", "--force"]
        case .searchIndex: ["--restart"]
        case .duplicateUsernames: ["--rename"]
        case .convertInnoDB: ["--dry-run"]
        default: []
        }
    }

    /// Options with a value (besides the configuration's: --config, --listen, --workers).
    var valueOptions: [String] {
        self == .repair ? ["--grace"] : []
    }

    /// Whether it reads the configuration.
    var needsConfiguration: Bool { self != .help }

    var usage: String {
        switch self {
        case .help: "ireporter help [COMMAND]"
        case .repair: "ireporter repair [--yes] [--dry-run] [--force] [--grace SECONDS] [--config FILE]"
        default: "ireporter \(name)" + flags.map { " [\($0)]" }.joined() + " [--config FILE]"
        }
    }

    var summary: String {
        switch self {
        case .check: "try what the configuration points at (database, folders, Redis, S3, listen address)"
        case .migrate: "apply sql/migrations to the database"
        case .migratePasswords: "replace the stored passwords by their Argon2id hashes"
        case .repair: "clear what a crash can leave behind (spool files, missing thumbnails, orphans)"
        case .searchIndex: "fill the search index for photos stored before it existed"
        case .duplicateUsernames: "list (or rename) usernames that several accounts hold"
        case .convertInnoDB: "convert the PHP version's MyISAM tables to InnoDB"
        case .copyPhotosToS3: "copy upload_dir's photos into the bucket of s3_url"
        case .help: "this page, or a command's help"
        }
    }

    var details: String {
        switch self {
        case .check:
            """
            check tries what the configuration points at, as the server would
            (after switching to `user` when run as root): the database
            (connection, credentials, the original tables, InnoDB tables with
            db_nodes; migrations of sql/migrations not applied are a warning:
            the server serves without them), upload_dir
            and session_dir (exist, writable, not writable by everyone), Redis
            and the bucket when configured, and the listen address. One line
            per item; exit status 1 when any failed. --check-config, by
            contrast, reads the configuration only (offline).
            """
        case .migrate:
            """
            migrate applies sql/migrations (001 to 016) to the database. 001
            widens login.pass, which starts the hashing of passwords: a PHP
            version still serving the database cannot log those accounts in
            (README, "Migrations": what to apply by hand meanwhile). Those
            already applied are skipped. Ctrl-C stops it with nothing
            half-done, and run again it goes on where it stopped.
            """
        case .migratePasswords:
            """
            migrate-passwords widens login.pass (migration 001) and replaces every
            password stored as the app sent it by its Argon2id hash, in place;
            accounts keep logging in with what the app sends. It shows its
            progress; Ctrl-C stops it with nothing half-done, and run again it
            goes on where it stopped.
            """
        case .repair:
            """
            repair clears what a crash can leave behind. It removes spool files
            and makes missing thumbnails, and shows what else it found: photo
            files without a row, rows without a photo file, and the comments,
            votes and the rest of photos and accounts whose row is gone. With
            --yes it moves the files and rows aside, restorably (files into
            upload_dir/.removed/, rows into the table photos_removed), and
            deletes those comments and votes, which only a database backup
            brings back. --dry-run changes nothing at all. It refuses when the
            damage looks like a wrong upload_dir, a disk that is not mounted or
            the wrong database (--force: go on all the same). Files younger
            than --grace seconds (default 60) are left alone, and counted:
            files just restored are as young, so with the server stopped use
            --grace 0. The server does the same at start and every 10 minutes,
            except for the rows and the comments and votes. Ctrl-C stops it
            with nothing half-done.
            """
        case .searchIndex:
            """
            search-index fills the search index (migration 005) for photos
            stored before it existed or by another server, in batches, from where
            the last run stopped (--restart: from the first photo). Safe to run,
            stop and run again while the server serves.
            """
        case .duplicateUsernames:
            """
            duplicate-usernames lists the usernames that several accounts hold
            (an old database's; migrate refuses 007, the unique index on
            login.username, while there are any). --rename keeps each name for
            its oldest account and renames the others to NAME~IdUser.
            """
        case .convertInnoDB:
            """
            convert-innodb converts the tables of the PHP version's schema from
            MyISAM to InnoDB (crash-safe; a Galera cluster replicates nothing
            else). --dry-run lists them and changes nothing.
            """
        case .copyPhotosToS3:
            """
            copy-photos-to-s3 copies the photos of upload_dir (the 2012 names and
            the tree) into the bucket of s3_url, each under the key photo_store =
            s3 reads; objects already there are skipped, so it goes on where a
            run stopped and copies only what is new when run again. It deletes
            nothing (docs/SCALING.md, "Moving from a folder").
            """
        case .help:
            """
            help prints the list of commands; help COMMAND (or COMMAND --help)
            that command's page.
            """
        }
    }

    /// `ireporter COMMAND --help`.
    var helpText: String {
        "usage: \(usage)\n\n\(summary).\n\n\(details)\n\n"
            + (needsConfiguration ? "Settings come from FILE as for the server (ireporter --help).\n" : "")
    }

    /// "unknown command 'migrat'; did you mean 'migrate'?"
    static func unknown(_ word: String) -> String {
        "unknown command '\(word)'"
            + (nearest(to: word, among: allCases.map(\.name)).map { "; did you mean '\($0)'?" } ?? "")
            + " (ireporter help lists them)"
    }
}
