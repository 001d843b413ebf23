/// One of `sql/migrations/`: an additive, idempotent change to the original
/// schema (the PHP version's database included), applied by `ireporter
/// migrate` (the first one also by `migrate-passwords`). The statements are
/// the file's (a unit test compares them), with the question that tells
/// whether it is applied already: a stopped run goes on where it stopped.
struct SchemaMigration: Sendable {
    enum Outcome: Equatable {
        case alreadyApplied, applied, stopped
        /// Not applied: the data must be repaired first (the reason says how).
        case refused(String)
    }

    let file: String
    /// Run in order; each is idempotent, so a run cut short is run again whole.
    let statements: [String]
    /// Answers a row once the migration is applied.
    let appliedQuery: String
    /// What the data must not hold for it to apply, asked before it runs.
    var precondition: Precondition? = nil

    enum Precondition: Sendable {
        /// No username held by several accounts: which account keeps it is
        /// the operator's choice (`ireporter duplicate-usernames`), never a
        /// silent merge.
        case noDuplicateUsernames

        /// Why the data does not allow the migration yet; nil: it does.
        func refusal(on database: DatabaseConnection) throws(DatabaseError) -> String? {
            switch self {
            case .noDuplicateUsernames:
                let duplicates = try DuplicateUsernames(database: database).list()
                guard !duplicates.isEmpty else { return nil }
                return "\(duplicates.count) usernames are held by several accounts "
                    + "(\(DuplicateUsernames.describe(duplicates.prefix(5)))\(duplicates.count > 5 ? ", …" : "")): "
                    + "`ireporter duplicate-usernames` lists them, `ireporter duplicate-usernames --rename` keeps each name "
                    + "for its oldest account and renames the others to NAME~IdUser (docs/SCALING.md); then run migrate again"
            }
        }
    }

    static let widenPass = SchemaMigration(
        file: "001-widen-pass.sql",
        statements: ["ALTER TABLE `login` MODIFY `pass` varchar(\(MariaDBUserStore.hashColumnLength)) CHARACTER SET latin1 NOT NULL"],
        appliedQuery: """
            SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'login' \
            AND COLUMN_NAME = 'pass' AND CHARACTER_MAXIMUM_LENGTH >= \(MariaDBUserStore.hashColumnLength)
            """)

    static let indexUsername = index(file: "002-index-username.sql", named: "username", on: "login", columns: "`username`")

    static let photoDetailsCommentsVotes = SchemaMigration(
        file: "003-photo-details-comments-votes.sql",
        statements: [
            "CREATE TABLE IF NOT EXISTS `photo_details` ( `IdPhoto` int(11) NOT NULL, `created` bigint NOT NULL, "
                + "`width` int(11) NOT NULL, `height` int(11) NOT NULL, PRIMARY KEY (`IdPhoto`) ) ENGINE=InnoDB DEFAULT CHARSET=utf8",
            "CREATE TABLE IF NOT EXISTS `photo_counts` ( `IdPhoto` int(11) NOT NULL, `likes` int(11) NOT NULL DEFAULT 0, "
                + "`dislikes` int(11) NOT NULL DEFAULT 0, `comments` int(11) NOT NULL DEFAULT 0, PRIMARY KEY (`IdPhoto`) ) "
                + "ENGINE=InnoDB DEFAULT CHARSET=utf8",
            "CREATE TABLE IF NOT EXISTS `votes` ( `IdPhoto` int(11) NOT NULL, `IdUser` int(11) NOT NULL, `vote` tinyint NOT NULL, "
                + "PRIMARY KEY (`IdPhoto`, `IdUser`) ) ENGINE=InnoDB DEFAULT CHARSET=utf8",
            "CREATE TABLE IF NOT EXISTS `comments` ( `IdComment` int(11) NOT NULL AUTO_INCREMENT, `IdPhoto` int(11) NOT NULL, "
                + "`IdUser` int(11) NOT NULL, `text` varchar(1000) CHARACTER SET latin1 NOT NULL, `created` bigint NOT NULL, "
                + "PRIMARY KEY (`IdComment`), KEY `IdPhoto_IdComment` (`IdPhoto`, `IdComment`) ) ENGINE=InnoDB DEFAULT CHARSET=utf8",
        ],
        // The last statement's table: the ones before it ran first.
        appliedQuery: """
            SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'comments'
            """)

    static let indexPhotosUser = index(file: "004-index-photos-user.sql", named: "IdUser_IdPhoto", on: "photos",
                                       columns: "`IdUser`, `IdPhoto`")

    /// A migration that adds one index, applied once the index exists.
    private static func index(file: String, named name: String, on table: String, columns: String) -> SchemaMigration {
        SchemaMigration(
            file: file,
            statements: ["CREATE INDEX IF NOT EXISTS `\(name)` ON `\(table)` (\(columns))"],
            appliedQuery: """
                SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '\(table)' \
                AND INDEX_NAME = '\(name)'
                """)
    }

    static let photoWords = SchemaMigration(
        file: "005-photo-words.sql",
        statements: [
            "CREATE TABLE IF NOT EXISTS `photo_words` ( `word` varbinary(64) NOT NULL, `IdPhoto` int(11) NOT NULL, "
                + "PRIMARY KEY (`word`, `IdPhoto`), KEY `photo` (`IdPhoto`, `word`) ) ENGINE=InnoDB",
            "CREATE TABLE IF NOT EXISTS `photo_words_backfill` ( `id` tinyint NOT NULL PRIMARY KEY, "
                + "`next_photo` int(11) NOT NULL ) ENGINE=InnoDB",
        ],
        // The last statement's table: the one before it ran first.
        appliedQuery: """
            SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'photo_words_backfill'
            """)

    static let photoSecrets = SchemaMigration(
        file: "006-photo-secrets.sql",
        statements: [
            "CREATE TABLE IF NOT EXISTS `photo_secrets` ( `IdPhoto` int(11) NOT NULL, "
                + "`secret` char(10) CHARACTER SET ascii NOT NULL, PRIMARY KEY (`IdPhoto`) ) ENGINE=InnoDB",
            "INSERT IGNORE INTO `photo_secrets` (`IdPhoto`, `secret`) SELECT `IdPhoto`, LOWER(HEX(RANDOM_BYTES(5))) FROM `photos`",
        ],
        // The table: a run stopped before its backfill leaves photos without
        // a secret, which the server gives them when an answer needs one.
        appliedQuery: """
            SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'photo_secrets'
            """)

    static let uniqueUsername = SchemaMigration(
        file: "007-unique-username.sql",
        statements: ["CREATE UNIQUE INDEX IF NOT EXISTS `username_unique` ON `login` (`username`)"],
        appliedQuery: MariaDBUserStore.uniqueUsernameQuery,
        precondition: .noDuplicateUsernames)

    static let indexPhotoUploadTime = index(file: "008-index-photo-upload-time.sql", named: MariaDBPhotoSearch.uploadTimeIndex,
                                            on: "photo_details", columns: "`created`, `IdPhoto`")

    static let followsNotifications = SchemaMigration(
        file: "009-follows-notifications.sql",
        statements: [
            "CREATE TABLE IF NOT EXISTS `follows` ( `id` int(11) NOT NULL AUTO_INCREMENT, `follower` int(11) NOT NULL, "
                + "`followee` int(11) NOT NULL, `created` bigint NOT NULL, PRIMARY KEY (`id`), "
                + "UNIQUE KEY `follower_followee` (`follower`, `followee`), KEY `follower_id` (`follower`, `id`), "
                + "KEY `followee_id` (`followee`, `id`) ) ENGINE=InnoDB DEFAULT CHARSET=utf8",
            "CREATE TABLE IF NOT EXISTS `notifications` ( `id` int(11) NOT NULL AUTO_INCREMENT, `recipient` int(11) NOT NULL, "
                + "`kind` enum('favourite','follow','mention') NOT NULL, `actor` int(11) NOT NULL, "
                + "`IdPhoto` int(11) NOT NULL DEFAULT 0, `IdComment` int(11) NOT NULL DEFAULT 0, `created` bigint NOT NULL, "
                + "PRIMARY KEY (`id`), KEY `recipient_id` (`recipient`, `id`), "
                + "UNIQUE KEY `subject` (`IdPhoto`, `kind`, `actor`, `IdComment`, `recipient`), KEY `IdComment` (`IdComment`) ) "
                + "ENGINE=InnoDB DEFAULT CHARSET=utf8",
        ],
        // The last statement's table: the one before it ran first.
        appliedQuery: """
            SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'notifications'
            """)

    static let oauth = SchemaMigration(
        file: "010-oauth.sql",
        statements: [
            "CREATE TABLE IF NOT EXISTS `oauth_apps` ( `id` int(11) NOT NULL AUTO_INCREMENT, "
                + "`client_id` varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, `secret_hash` char(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, "
                + "`name` varbinary(255) NOT NULL, `website` varbinary(2000) NOT NULL, `redirect_uris` varbinary(8000) NOT NULL, "
                + "`scopes` varchar(1000) CHARACTER SET ascii NOT NULL, `created` bigint NOT NULL, PRIMARY KEY (`id`), "
                + "UNIQUE KEY `client_id` (`client_id`) ) ENGINE=InnoDB",
            "CREATE TABLE IF NOT EXISTS `oauth_tokens` ( `id` bigint NOT NULL AUTO_INCREMENT, "
                + "`token_hash` char(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, `app_id` int(11) NOT NULL, `IdUser` int(11) NOT NULL, "
                + "`scopes` varchar(1000) CHARACTER SET ascii NOT NULL, `created` bigint NOT NULL, `expires` bigint NOT NULL, "
                + "`last_used` bigint NOT NULL, `revoked` bigint NOT NULL, PRIMARY KEY (`id`), "
                + "UNIQUE KEY `token_hash` (`token_hash`), KEY `IdUser_app_id` (`IdUser`, `app_id`) ) ENGINE=InnoDB",
            "CREATE TABLE IF NOT EXISTS `oauth_codes` ( `code_hash` char(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, "
                + "`app_id` int(11) NOT NULL, `IdUser` int(11) NOT NULL, `redirect_uri` varbinary(2000) NOT NULL, "
                + "`scopes` varchar(1000) CHARACTER SET ascii NOT NULL, `code_challenge` varchar(128) CHARACTER SET ascii NOT NULL, "
                + "`code_challenge_method` varchar(8) CHARACTER SET ascii NOT NULL, `expires` bigint NOT NULL, "
                + "`token_id` bigint NOT NULL, PRIMARY KEY (`code_hash`), KEY `expires` (`expires`) ) ENGINE=InnoDB",
        ],
        // The last statement's table: the ones before it ran first.
        appliedQuery: """
            SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'oauth_codes'
            """)

    static let mediaAttachments = SchemaMigration(
        file: "011-media-attachments.sql",
        statements: [
            "CREATE TABLE IF NOT EXISTS `media_attachments` ( `IdMedia` int(11) NOT NULL AUTO_INCREMENT, `IdUser` int(11) NOT NULL, "
                + "`file` varchar(64) CHARACTER SET ascii NOT NULL, `width` int(11) NOT NULL, `height` int(11) NOT NULL, "
                + "`description` varchar(1500) CHARACTER SET latin1 NOT NULL, `focus` varchar(40) CHARACTER SET ascii NOT NULL, "
                + "`created` bigint NOT NULL, PRIMARY KEY (`IdMedia`), KEY `IdUser_IdMedia` (`IdUser`, `IdMedia`) ) "
                + "ENGINE=InnoDB DEFAULT CHARSET=utf8",
            "CREATE TABLE IF NOT EXISTS `photo_descriptions` ( `IdPhoto` int(11) NOT NULL, "
                + "`description` varchar(1500) CHARACTER SET latin1 NOT NULL, PRIMARY KEY (`IdPhoto`) ) ENGINE=InnoDB DEFAULT CHARSET=utf8",
        ],
        // The last statement's table: the one before it ran first.
        appliedQuery: """
            SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'photo_descriptions'
            """)

    static let statusIdempotency = SchemaMigration(
        file: "012-status-idempotency.sql",
        statements: [
            "CREATE TABLE IF NOT EXISTS `status_idempotency` ( `IdUser` int(11) NOT NULL, "
                + "`key_hash` char(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, `status_id` bigint NOT NULL, "
                + "`created` bigint NOT NULL, PRIMARY KEY (`IdUser`, `key_hash`), KEY `created` (`created`) ) ENGINE=InnoDB",
        ],
        appliedQuery: """
            SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'status_idempotency'
            """)

    static let indexUserVotesComments = SchemaMigration(
        file: "013-index-user-votes-comments.sql",
        statements: [
            "CREATE INDEX IF NOT EXISTS `\(MariaDBVoteStore.userIndex)` ON `votes` (`IdUser`, `IdPhoto`, `vote`)",
            "CREATE INDEX IF NOT EXISTS `IdUser_IdComment` ON `comments` (`IdUser`, `IdComment`)",
        ],
        // The last statement's index: the one before it ran first.
        appliedQuery: """
            SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'comments' \
            AND INDEX_NAME = 'IdUser_IdComment'
            """)

    static let indexOAuthSweep = SchemaMigration(
        file: "014-index-oauth-sweep.sql",
        statements: [
            "CREATE INDEX IF NOT EXISTS `created` ON `oauth_apps` (`created`)",
            "CREATE INDEX IF NOT EXISTS `app_id` ON `oauth_codes` (`app_id`)",
            "CREATE INDEX IF NOT EXISTS `revoked` ON `oauth_tokens` (`revoked`)",
            "CREATE INDEX IF NOT EXISTS `expires` ON `oauth_tokens` (`expires`)",
            "CREATE INDEX IF NOT EXISTS `\(MariaDBOAuthStore.sweepIndex)` ON `oauth_tokens` (`app_id`)",
        ],
        // The last statement's index: the ones before it ran first.
        appliedQuery: """
            SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'oauth_tokens' \
            AND INDEX_NAME = 'app_id'
            """)

    static let readMarkers = SchemaMigration(
        file: "015-read-markers.sql",
        statements: [
            "CREATE TABLE IF NOT EXISTS `read_markers` ( `IdUser` int(11) NOT NULL, `timeline` enum('home','notifications') NOT NULL, "
                + "`last_read_id` bigint NOT NULL, `version` int(11) NOT NULL, `updated` bigint NOT NULL, "
                + "PRIMARY KEY (`IdUser`, `timeline`) ) ENGINE=InnoDB",
        ],
        appliedQuery: """
            SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'read_markers'
            """)

    static let accountRegistered = SchemaMigration(
        file: "016-account-registered.sql",
        statements: [
            "CREATE TABLE IF NOT EXISTS `login_registered` ( `IdUser` int(11) NOT NULL, `registered` bigint NOT NULL, "
                + "PRIMARY KEY (`IdUser`) ) ENGINE=InnoDB",
        ],
        appliedQuery: """
            SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'login_registered'
            """)

    /// In the order of their numbers; each stands alone (applied or not by
    /// its own question), so one missing from a database or from this list
    /// does not stop the others.
    static let all = [widenPass, indexUsername, photoDetailsCommentsVotes, indexPhotosUser, photoWords, photoSecrets,
                      uniqueUsername, indexPhotoUploadTime, followsNotifications, oauth, mediaAttachments, statusIdempotency,
                      indexUserVotesComments, indexOAuthSweep, readMarkers, accountRegistered]

    /// The 2012 tables every migration builds on (`sql/schema.sql`, or the
    /// PHP version's dump): those the database lacks.
    static func missingBaseTables(on database: DatabaseConnection) throws(DatabaseError) -> [String] {
        let tables = Set(try database.query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()")
            .map { String(decoding: $0["TABLE_NAME"] ?? [], as: UTF8.self) })
        return ["login", "photos"].filter { !tables.contains($0) }
    }

    var name: String { String(file.dropLast(".sql".count)) }

    func isApplied(on database: DatabaseConnection) throws(DatabaseError) -> Bool {
        !(try database.query(appliedQuery)).isEmpty
    }

    /// Applies it unless it is already, showing MariaDB's progress reports
    /// (a copy of a large MyISAM table takes minutes); a stop asked for
    /// meanwhile interrupts it, and the server undoes it whole.
    /// `database` must report progress (`DatabaseConnection(reportsProgress:)`).
    func apply(on database: DatabaseConnection, progress: TaskProgress) throws(DatabaseError) -> Outcome {
        if try isApplied(on: database) { return .alreadyApplied }
        if progress.stopRequested { return .stopped }
        if let reason = try precondition?.refusal(on: database) { return .refused(reason) }
        do throws(DatabaseError) {
            for statement in statements {
                try database.runLong(statement) { report in
                    progress.update("\(name): stage \(report.stage) of \(report.stages) (\(report.state)), "
                                    + "\(Int(report.percent))% of it done")
                    return !progress.stopRequested
                }
            }
        } catch where error.code == .queryInterrupted || progress.stopRequested {
            // The KILL QUERY of a stop (MyISAM's index build answers it as a killed repair, 1034).
            return .stopped
        }
        return .applied
    }
}
