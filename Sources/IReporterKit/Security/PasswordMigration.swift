/// `ireporter migrate-passwords`: widens `login.pass` (sql/migrations/001),
/// then replaces each password still stored as the app sent it (a salted
/// SHA-1 computed on the phone: whoever reads the table can log in with it)
/// by its Argon2id hash. Idempotent and safe while the server runs: a row is
/// only replaced if it still holds the value that was read. On a large table
/// it shows its progress, and a stop (Ctrl-C) ends it between two rows: run
/// again, it goes on with the rows still stored as sent.
enum PasswordMigration {
    private static let batch = 500

    static func run(_ configuration: Configuration) -> Int32 {
        DatabaseConnection.initializeLibrary()
        let progress = TaskProgress("migrate-passwords")
        let database = DatabaseConnection(settings: configuration.database, reportsProgress: true)
        let users = MariaDBUserStore(database: database)
        let hasher = PasswordHasher(parameters: configuration.passwordHashing)
        do {
            switch try SchemaMigration.widenPass.apply(on: database, progress: progress) {
            case .stopped:
                TaskProgress.say(progress.stoppedMessage("login.pass not widened yet"))
                return TaskProgress.stoppedStatus
            case .applied:
                TaskProgress.say("widened login.pass to varchar(\(MariaDBUserStore.hashColumnLength))")
            case .alreadyApplied:
                break
            case .refused(let reason): // (widening has no precondition)
                Log.error("migrate-passwords: \(reason)")
                return 1
            }
            let total = try users.legacyPasswordCount()
            var seen = 0, migrated = 0
            var after: Int64 = 0
            while true {
                let legacy = try users.legacyPasswords(after: after, limit: batch)
                guard let last = legacy.last else { break }
                for (userID, stored) in legacy {
                    if progress.stopRequested {
                        TaskProgress.say(progress.stoppedMessage("\(migrated) of \(total) passwords re-hashed"))
                        return TaskProgress.stoppedStatus
                    }
                    if try users.replacePassword(userID: userID, old: stored, new: hasher.hash(stored)) { migrated += 1 }
                    seen += 1
                    progress.update("re-hashing passwords", done: seen, of: total)
                }
                after = last.userID
            }
            TaskProgress.say("re-hashed \(migrated) of \(total) passwords stored as sent (Argon2id m=\(hasher.parameters.memoryKiB) KiB, t=\(hasher.parameters.iterations), p=\(hasher.parameters.parallelism))")
            return 0
        } catch {
            Log.error("migrate-passwords: \(error)")
            return 1
        }
    }
}
