/// Usernames that several `login` rows hold, as the column compares them
/// (case and trailing spaces ignored): what an old database without a
/// unique index may have (two registrations at once on the PHP version),
/// and what migration 007 cannot index. For `ireporter duplicate-usernames`.
struct DuplicateUsernames {
    struct Group: Equatable {
        /// The name as its oldest account has it.
        var username: [UInt8]
        /// Every account holding it, oldest (lowest IdUser) first.
        var accounts: [Int64]
    }

    struct Renaming: Equatable {
        var account: Int64
        /// The account's name before, as it was stored.
        var from: [UInt8]
        var to: [UInt8]
    }

    let database: DatabaseConnection

    func list() throws(DatabaseError) -> [Group] {
        try database.query("""
            SELECT (SELECT username FROM login o WHERE o.IdUser = MIN(l.IdUser)) AS username,
                   GROUP_CONCAT(IdUser ORDER BY IdUser SEPARATOR ',') AS accounts
            FROM login l GROUP BY username HAVING COUNT(*) > 1 ORDER BY MIN(IdUser)
            """).map { row in
            Group(username: row["username"] ?? [],
                  accounts: (row["accounts"] ?? []).split(separator: UInt8(ascii: ",")).compactMap {
                      Int64(String(decoding: $0, as: UTF8.self))
                  })
        }
    }

    /// Keeps each name for its oldest account and renames every other one
    /// to `NAME~IdUser` (the oldest account's NAME, cut between characters to fit), each in
    /// a transaction that first checks the new name is free. A new name
    /// already taken is left for the operator (`refused`).
    func renameYounger() throws -> (renamed: [Renaming], refused: [Renaming]) {
        var renamed: [Renaming] = [], refused: [Renaming] = []
        for group in try list() {
            for account in group.accounts.dropFirst() {
                let suffix = Array("~\(account)".utf8)
                var renaming = Renaming(account: account, from: [],
                                        to: TextRules.fitting(group.username, maxBytes: RegisterCommand.maxUsernameBytes - suffix.count) + suffix)
                let done = try database.retryingTransaction { () throws -> Bool in
                    renaming.from = try database.query("SELECT username FROM login WHERE IdUser = ? FOR UPDATE", [.int(account)])
                        .first?["username"] ?? []
                    guard try database.query("SELECT 1 FROM login WHERE username = ? LIMIT 1 FOR UPDATE", [.bytes(renaming.to)]).isEmpty
                    else { return false }
                    return try database.execute("UPDATE login SET username = ? WHERE IdUser = ?",
                                                [.bytes(renaming.to), .int(account)]).affectedRows == 1
                }
                if done { renamed.append(renaming) } else { refused.append(renaming) }
            }
        }
        return (renamed, refused)
    }

    /// `"carol" (IdUser 3, 9)`, for messages.
    static func describe(_ groups: some Sequence<Group>) -> String {
        groups.map { "\"\(String(decoding: $0.username, as: UTF8.self))\" (IdUser \($0.accounts.map(String.init).joined(separator: ", ")))" }
            .joined(separator: ", ")
    }
}
