#if canImport(Glibc)
import Glibc
#endif

/// What one store holds of an account, removed when the account is deleted
/// (`delete_account`). Each part goes through its store's own way of
/// removing one row (so counts and files stay right), and may run again:
/// a deletion cut short is finished by asking again.
protocol AccountPart {
    func removeAll(of userID: Int64) throws
    /// Its tables come with a migration: on a database without them the
    /// part holds nothing (false: a missing table is a failure, as for the
    /// photos, whose removal needs migration 003's counts).
    var isAddedByMigration: Bool { get }
}

/// An account's deletion: its sessions and its apps' tokens end first (no
/// request of it lands meanwhile: a photo an app posted while the photos
/// went would outlive the account), then every store's part, and its
/// `login` row last, so that until the end the person can still log in and
/// ask again.
struct AccountRemoval {
    /// Rows a step reads at once.
    static let pageSize = 500

    private let sessions: any SessionStore
    private let users: any UserStore
    private let counters: any SharedCounters
    /// A store added later (follows, tokens, …) adds its part here.
    let parts: [any AccountPart]

    init(_ services: AppServices) {
        sessions = services.sessions
        counters = services.counters
        users = services.users
        parts = [TokensOfAccount(oauth: services.oauth, counters: services.counters), VotesOfAccount(votes: services.votes),
                 CommentsOfAccount(comments: services.comments),
                 PhotosOfAccount(photos: services.photos, removal: PhotoRemoval(services)),
                 FollowsOfAccount(follows: services.follows), NotificationsOfAccount(notifications: services.notifications),
                 MediaOfAccount(media: services.media, files: services.photoFiles), MarkersOfAccount(markers: services.markers)]
    }

    func remove(_ userID: Int64) throws {
        try sessions.endSessions(of: userID, except: nil)
        for part in parts { try Self.remove(part, of: userID) }
        try users.removeAccount(id: userID)
        // An upload, a comment, a vote, a follow, a media or an app's sign-in
        // that passed its own before the sessions ended (or a JSON-RPC
        // batch's later calls) may have committed since its part went, with
        // the notification it made; from here on none can (each store's
        // addition needs the account's row).
        for part in parts { try Self.remove(part, of: userID) }
        // The votes and comments were taken back through their stores, which
        // tell no cache: an answer cached meanwhile kept their counts.
        counters.noteStreamChanged()
    }

    /// A part whose tables a database does not have yet (its migration not
    /// applied) holds nothing of the account.
    private static func remove(_ part: any AccountPart, of userID: Int64) throws {
        do {
            try part.removeAll(of: userID)
        } catch let error as any StoreError where error.isMissingTable && part.isAddedByMigration {}
    }
}

/// The account's votes on others' photos (those on its own go with them),
/// each taken back as `vote`'s `clear` does: the counts follow.
struct VotesOfAccount: AccountPart {
    var isAddedByMigration: Bool { true }
    let votes: any VoteStore

    func removeAll(of userID: Int64) throws {
        var after: Int64 = 0
        while case let page = try votes.votes(byUser: userID, after: after, limit: AccountRemoval.pageSize), let last = page.last {
            for vote in page { _ = try votes.setVote(nil, photoID: vote.photoID, userID: userID) }
            after = last.photoID
        }
    }
}

/// The account's comments, each removed as `uncomment` does.
struct CommentsOfAccount: AccountPart {
    var isAddedByMigration: Bool { true }
    let comments: any CommentStore

    func removeAll(of userID: Int64) throws {
        var before = Int64.max
        while case let page = try comments.comments(byUser: userID, page: PageCursor(before: before, count: AccountRemoval.pageSize)),
              let last = page.last {
            for comment in page { _ = try comments.removeComment(id: comment.id, by: userID) }
            before = last.id
        }
    }
}

/// The account's photos, each removed as `delete` does (every size of it).
struct PhotosOfAccount: AccountPart {
    var isAddedByMigration: Bool { false }
    let photos: any PhotoStore
    let removal: PhotoRemoval

    func removeAll(of userID: Int64) throws {
        var before = Int64.max
        while case let page = try photos.photoIDs(ofUser: userID, before: before, limit: AccountRemoval.pageSize), let last = page.last {
            for id in page { _ = try removal.remove(id: id, by: userID) }
            before = last
        }
        // Those `ireporter repair` set aside (their files, in the upload folder's `.removed/`, are the operator's).
        try photos.forgetSetAside(ofUser: userID)
    }
}

/// Whom the account follows and who follows it.
struct FollowsOfAccount: AccountPart {
    var isAddedByMigration: Bool { true }
    let follows: any FollowStore

    func removeAll(of userID: Int64) throws { try follows.forget(userID: userID) }
}

/// The notifications to the account and those its likes, follows and
/// comments gave others (last: the parts before may have told some).
struct NotificationsOfAccount: AccountPart {
    var isAddedByMigration: Bool { true }
    let notifications: any NotificationStore

    func removeAll(of userID: Int64) throws { try notifications.forget(userID: userID) }
}

/// Where the account stopped reading its timelines.
struct MarkersOfAccount: AccountPart {
    var isAddedByMigration: Bool { true }
    let markers: any ReadMarkerStore

    func removeAll(of userID: Int64) throws { try markers.removeMarkers(of: userID) }
}

/// The Mastodon API's tokens and codes of the account: no app keeps access.
struct TokensOfAccount: AccountPart {
    var isAddedByMigration: Bool { true }
    let oauth: any OAuthStore
    let counters: any SharedCounters

    func removeAll(of userID: Int64) throws {
        try oauth.forget(userID: userID)
        counters.noteGrantsRevoked()
    }
}

/// The media it uploaded through the Mastodon API and never posted, with
/// their files; its posts' idempotency keys.
struct MediaOfAccount: AccountPart {
    var isAddedByMigration: Bool { true }
    let media: any MediaStore
    let files: any PhotoFileStore

    func removeAll(of userID: Int64) throws {
        try media.forgetPosts(ofUser: userID)
        let waiting = try media.pending(ofUser: userID)
        guard !waiting.isEmpty else { return }
        let directory = files.spoolDirectory
        for pending in waiting {
            MediaEndpoints.removeFile(of: pending.file, in: directory)
            try media.removePending(id: pending.id)
        }
    }
}
