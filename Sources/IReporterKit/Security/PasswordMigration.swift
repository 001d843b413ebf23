/// `ireporter migrate-passwords`: widens `login.pass`, then replaces each
/// password still stored as the app sent it (a salted SHA-1 computed on the
/// phone: whoever reads the table can log in with it) by its Argon2id hash.
/// Idempotent and safe while the server runs: a row is only replaced if it
/// still holds the value that was read.
enum PasswordMigration {
    static func run(_ configuration: Configuration) -> Int32 {
        DatabaseConnection.initializeLibrary()
        let database = DatabaseConnection(settings: configuration.database)
        let users = MariaDBUserStore(database: database)
        let hasher = PasswordHasher(parameters: configuration.passwordHashing)
        do {
            if try users.passwordColumnLength() < MariaDBUserStore.hashColumnLength {
                print("widening login.pass to varchar(\(MariaDBUserStore.hashColumnLength))")
                try users.widenPasswordColumn()
            }
            let legacy = try users.legacyPasswords()
            var migrated = 0
            for (userID, stored) in legacy {
                if try users.replacePassword(userID: userID, old: stored, new: hasher.hash(stored)) { migrated += 1 }
            }
            print("re-hashed \(migrated) of \(legacy.count) passwords stored as sent (Argon2id m=\(hasher.parameters.memoryKiB) KiB, t=\(hasher.parameters.iterations), p=\(hasher.parameters.parallelism))")
            return 0
        } catch {
            Log.error("migrate-passwords: \(error)")
            return 1
        }
    }
}
