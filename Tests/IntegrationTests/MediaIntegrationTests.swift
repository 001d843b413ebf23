import Dispatch
import Testing
@testable import IReporterKit
import TestSupport

extension DatabaseTests {
    /// The Mastodon API's stores on the real MariaDB (migration 011): media
    /// waiting for their post, photos' descriptions (gone with their photo),
    /// a photo's likers, a comment by its id.
    @Suite struct MediaIntegrationTests {
        /// Accounts 1 to 3: a media is kept only while its account is there.
        static func withAccounts() throws -> DatabaseConnection {
            let database = try APIHarness().database
            try database.execute("INSERT INTO login (username, pass) VALUES ('bob', 'p'), ('alice', 'p'), ('carol', 'p')")
            return database
        }

        @Test func pendingMediaAreKeptChangedAndSwept() throws {
            let store = MariaDBMediaStore(database: try Self.withAccounts())
            let first = try #require(try store.addPending(PendingMedia(userID: 1, file: ".media-aa", width: 64, height: 48,
                                                                       description: Array("A dog".utf8), focusX: 0.5, focusY: -0.25,
                                                                       created: 100), limit: 8))
            let second = try #require(try store.addPending(PendingMedia(userID: 1, file: ".media-bb", width: 8, height: 8,
                                                                        description: nil, focusX: nil, focusY: nil, created: 200),
                                                           limit: 8))
            let kept = try #require(try store.pending(id: first))
            #expect(kept == PendingMedia(id: first, userID: 1, file: ".media-aa", width: 64, height: 48, description: Array("A dog".utf8),
                                         focusX: 0.5, focusY: -0.25, created: 100))
            #expect(try store.pending(id: second)?.description == nil, "none is the empty text, read back as none")
            #expect(try store.pendingCount(userID: 1) == 2)
            #expect(try store.pendingCount(userID: 2) == 0)
            try store.updatePending(id: second, userID: 2, description: Array("not yours".utf8), focusX: nil, focusY: nil)
            #expect(try store.pending(id: second)?.description == nil, "another's media is left alone")
            try store.updatePending(id: second, userID: 1, description: Array("Ünïcode ✓".utf8), focusX: 1, focusY: 0)
            #expect(try store.pending(id: second)?.description == Array("Ünïcode ✓".utf8), "the bytes sent, as the text columns keep them")
            #expect(try store.pending(id: second)?.focusX == 1)
            #expect(try store.pendingCreated(before: 150, limit: 8).map(\.id) == [first])
            try store.removePending(id: first)
            #expect(try store.pending(id: first) == nil)
            #expect(try store.pending(id: 1 << 40) == nil, "beyond the column: none")
        }

        /// A media whose account was deleted while it was on its way is not
        /// kept: the deletion's second pass finds any committed before.
        @Test func aMediaOfAnAccountGoneIsNotKept() throws {
            let database = try Self.withAccounts()
            let store = MariaDBMediaStore(database: database)
            func media(of userID: Int64) -> PendingMedia {
                PendingMedia(userID: userID, file: ".media-cc", width: 8, height: 8, description: nil, focusX: nil, focusY: nil, created: 1)
            }
            #expect(try store.addPending(media(of: 1), limit: 8) != nil)
            try database.execute("DELETE FROM login WHERE IdUser = 1")
            #expect(throws: PhotoStoreError.self) { try store.addPending(media(of: 1), limit: 8) }
            #expect(try store.pendingCount(userID: 1) == 1, "only the one made before")
        }

        @Test func noMoreThanTheLimitWaitEvenWhenUploadsArriveTogether() throws {
            let store = MariaDBMediaStore(database: try Self.withAccounts())
            @Sendable func media(_ user: Int64, _ file: String) -> PendingMedia {
                PendingMedia(userID: user, file: file, width: 1, height: 1, description: nil, focusX: nil, focusY: nil, created: 1)
            }
            for file in [".media-1", ".media-2"] { #expect(try store.addPending(media(1, file), limit: 2) != nil) }
            #expect(try store.addPending(media(1, ".media-3"), limit: 2) == nil)
            #expect(try store.pending(ofUser: 1).map(\.file) == [".media-1", ".media-2"], "the refused one is not kept")
            #expect(try store.addPending(media(2, ".media-4"), limit: 2) != nil, "another user's count is their own")

            let settings = try TestServices.settings()
            let limit = 3
            // Each upload its own connection, as each worker has; the count before the insert said room for all.
            DispatchQueue.concurrentPerform(iterations: 8) { upload in
                let worker = MariaDBMediaStore(database: DatabaseConnection(settings: settings))
                _ = try? worker.addPending(media(3, ".media-together-\(upload)"), limit: limit)
            }
            // Uploads at the limit together may all be refused (each counts the others); never more kept.
            #expect(try store.pendingCount(userID: 3) <= limit)
            #expect(try store.addPending(media(3, ".media-alone"), limit: 8) != nil, "carol's account is there")
        }

        @Test func aDescriptionGoesWithItsPhoto() throws {
            let phone = try APIHarness()
            try phone.database.execute("INSERT INTO login (username, pass) VALUES ('alice', 'p'), ('bob', 'p')")
            let photos = MariaDBPhotoStore(database: phone.database)
            let id = try photos.add(userID: 1, title: Array("t".utf8), publish: { _ in }, unpublish: { _ in })
            let store = MariaDBMediaStore(database: phone.database)
            try store.setDescription(Array("first".utf8), ofPhoto: id)
            try store.setDescription(Array("second".utf8), ofPhoto: id)
            #expect(try store.descriptions(ofPhotos: [id, id + 1]) == [id: Array("second".utf8)])
            let votes = MariaDBVoteStore(database: phone.database)
            _ = try votes.setVote(.like, photoID: id, userID: 2)
            _ = try votes.setVote(.dislike, photoID: id, userID: 1)
            #expect(try votes.likers(of: id, page: PageCursor(count: 10)).map(\.userID) == [2], "likes only")
            #expect(try votes.likers(of: id, page: PageCursor(count: 10)).map { String(decoding: $0.username, as: UTF8.self) } == ["bob"])
            let comments = MariaDBCommentStore(database: phone.database)
            let comment = try #require(try comments.addComment(photoID: id, userID: 2, text: Array("Nice".utf8), created: 5))
            #expect(try comments.comment(id: comment.id) == comment)
            #expect(try comments.comment(id: comment.id + 1) == nil)
            #expect(try photos.deleteOwned(id: id, by: 1) == .deleted)
            #expect(try store.descriptions(ofPhotos: [id]).isEmpty)
            try store.setDescription(Array("written as it went".utf8), ofPhoto: id)
            #expect(try phone.database.query("SELECT 1 FROM photo_descriptions").isEmpty, "a deleted photo's id keeps no description")
            try store.setDescription([], ofPhoto: id)
            #expect(try store.descriptions(ofPhotos: [id]).isEmpty, "an empty description is none")
        }

        /// Migration 012's keys: claimed by one request (a second at once is
        /// told the first is under way), per account, for the hour asked,
        /// released when the post failed, taken over once abandoned, swept by
        /// age and with their account; before the migration, none kept.
        @Test func postsAreClaimedAndRememberedByTheirIdempotencyKeys() throws {
            let store = MariaDBMediaStore(database: try APIHarness().database)
            let key = OAuthSecret.hash("retry-1")
            func claim(_ user: Int64, since: Int64 = 0, abandonedBefore: Int64 = 0, at time: Int64 = 5000) throws -> PostClaim {
                try store.claimPost(userID: user, keyHash: key, since: since, abandonedBefore: abandonedBefore, at: time)
            }
            #expect(try claim(1, at: 1000) == .claimed)
            #expect(try claim(1, at: 1001) == .underWay, "a second request at once: the first is being made")
            try store.rememberPost(userID: 1, keyHash: key, statusID: 42, at: 1000)
            #expect(try claim(1) == .posted(42))
            #expect(try claim(2, at: 2000) == .claimed, "each account its own")
            try store.rememberPost(userID: 2, keyHash: key, statusID: 1_000_000_000_000_007, at: 2000)
            #expect(try claim(2) == .posted(1_000_000_000_000_007), "a comment's id")
            #expect(try claim(1, since: 1001, at: 3000) == .claimed, "older than the hour asked: the key is new again")
            try store.releasePost(userID: 1, keyHash: key)
            #expect(try claim(1, since: 1001, at: 3000) == .claimed, "released after a failed post: claimed again")
            #expect(try claim(1, abandonedBefore: 3001, at: 3100) == .claimed, "a claim never remembered, once abandoned")
            try store.rememberPost(userID: 1, keyHash: key, statusID: 43, at: 3100)
            try store.releasePost(userID: 1, keyHash: key)
            #expect(try claim(1) == .posted(43), "a remembered status is not released")
            try store.forgetPosts(before: 3000)
            #expect(try claim(2, at: 6000) == .claimed, "swept by age")
            try store.forgetPosts(ofUser: 1)
            #expect(try claim(1, at: 6000) == .claimed, "swept with the account")

            let unmigrated = MariaDBMediaStore(database: try APIHarness(migrated: false).database)
            #expect(try unmigrated.claimPost(userID: 1, keyHash: key, since: 0, abandonedBefore: 0, at: 1000) == .notKept)
            try unmigrated.rememberPost(userID: 1, keyHash: key, statusID: 42, at: 1000)
            try unmigrated.releasePost(userID: 1, keyHash: key)
            try unmigrated.forgetPosts(before: 2000)
            try unmigrated.forgetPosts(ofUser: 1)
        }

        /// `stream`'s extras read every newest page's descriptions (its
        /// cache serves every set of fields): a database the operator has
        /// migrated only up to 003 still answers them, with none.
        @Test func theStreamsExtrasNeedNoMigration011() throws {
            let phone = try APIHarness(migrated: false)
            try TestServices.runSQLFile(phone.database, "migrations/003-photo-details-comments-votes.sql")
            try phone.database.execute("INSERT INTO login (username, pass) VALUES ('alice', 'p')")
            try phone.database.execute("INSERT INTO photos (IdUser, title) VALUES (1, 'Sunset')")
            #expect(try MariaDBMediaStore(database: phone.database).descriptions(ofPhotos: [1]).isEmpty)
            #expect(try phone.body([("command", "stream"), ("extras", "likes,description")])
                .hasSuffix(#""title":"Sunset","IdUser":"1","username":"alice","likes":"0","description":null}]}"#))
        }
    }
}
