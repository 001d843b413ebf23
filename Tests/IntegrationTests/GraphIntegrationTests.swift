import Testing
@testable import IReporterKit
import TestSupport

extension DatabaseTests {
    /// The follow graph and notifications (migration 009) against the real
    /// MariaDB: the stores' rules, the commands on them, the queries' plans.
    @Suite struct GraphIntegrationTests {
        /// Accounts u1...u`count` (IdUser 1...count).
        func accounts(_ database: DatabaseConnection, _ count: Int) throws {
            try database.execute("INSERT INTO login (username, pass) SELECT CONCAT('u', seq), 'p' FROM seq_1_to_\(count)")
        }

        @Test func followsAreOneEdgeEachListedNewestFirst() throws {
            let database = try APIHarness().database
            try accounts(database, 4)
            let graph = MariaDBFollowStore(database: database)
            #expect(try graph.follow(2, by: 1, created: 100))
            #expect(try !graph.follow(2, by: 1, created: 101), "once")
            #expect(try graph.follow(3, by: 1, created: 102))
            #expect(try graph.follow(2, by: 3, created: 103))
            #expect(try graph.follow(2, by: 99, created: 104), "the caller checks accounts; the lists show only those that exist")
            let followers = try graph.followers(of: 2, page: PageCursor(count: 10))
            #expect(followers.map(\.userID) == [3, 1])
            #expect(followers.map { String(decoding: $0.username, as: UTF8.self) } == ["u3", "u1"])
            let edge = followers[0].id
            #expect(try graph.followers(of: 2, page: PageCursor(before: edge, count: 10)).map(\.userID) == [1])
            #expect(try graph.followers(of: 2, page: PageCursor(count: 1)).map(\.userID) == [3])
            #expect(try graph.following(of: 1, page: PageCursor(count: 10)).map(\.userID) == [3, 2])
            #expect(try graph.familiarFollowers(of: 2, viewer: 1, limit: 10).map(\.userID) == [3], "1 follows 3, who follows 2")
            #expect(try graph.familiarFollowers(of: 2, viewer: 3, limit: 10).isEmpty)
            #expect(try graph.counts(of: 2, viewer: 1) == FollowCounts(followers: 3, following: 0, followedByViewer: true))
            #expect(try graph.counts(of: 1, viewer: 2) == FollowCounts(followers: 0, following: 2, followedByViewer: false))
            #expect(try graph.counts(of: 1, viewer: nil).followedByViewer == nil)
            #expect(try graph.followingCount(of: 1) == 2 && graph.followingCount(of: 2) == 0)
            #expect(try graph.unfollow(2, by: 1))
            #expect(try !graph.unfollow(2, by: 1))
            try graph.forget(userID: 3)
            #expect(try graph.following(of: 1, page: PageCursor(count: 10)).isEmpty)
            #expect(try graph.counts(of: 2, viewer: nil).followers == 1, "99's edge is left")
        }

        @Test func theFeedIsTheFollowedAndOwnPhotosNewestFirst() throws {
            let database = try APIHarness().database
            try accounts(database, 4)
            // Photos 2...41: owners 1, 2, 3, 4, 1, 2, ...
            try database.execute("INSERT INTO photos (IdUser, title) SELECT 1 + (seq - 2) % 4, 't' FROM seq_2_to_41")
            let graph = MariaDBFollowStore(database: database)
            #expect(try graph.feed(of: 1, page: PageCursor(count: 3)) == [38, 34, 30], "one's own")
            _ = try graph.follow(3, by: 1, created: 0)
            #expect(try graph.feed(of: 1, page: PageCursor(count: 4)) == [40, 38, 36, 34])
            #expect(try graph.feed(of: 1, page: PageCursor(since: 33, before: 40, count: 50)) == [38, 36, 34])
            #expect(try graph.feed(of: 2, page: PageCursor(count: 2)) == [39, 35], "another's home")
            #expect(try graph.feed(of: 1, page: PageCursor(since: 33, before: .max, count: 2, fromSince: true)) == [36, 34],
                    "oldest first from since, answered newest first")
        }

        /// A page reads at most a page of each person's photos (the index
        /// rows MariaDB counts), not all of theirs; more people than one
        /// statement takes are read in groups.
        @Test func aFeedPageReadsAPageAPersonWhateverTheyPosted() throws {
            let database = try APIHarness().database
            let people = MariaDBFollowStore.feedGroup + 8
            try accounts(database, people)
            // 20 photos each: 800 in all, interleaved.
            try database.execute("INSERT INTO photos (IdUser, title) SELECT 1 + (seq - 2) % \(people), 't' FROM seq_2_to_\(1 + 20 * people)")
            let graph = MariaDBFollowStore(database: database)
            for followee in 2...people { _ = try graph.follow(Int64(followee), by: 1, created: 0) }
            func indexRowsRead() throws -> Int64 {
                try database.query("SHOW SESSION STATUS WHERE Variable_name IN ('Handler_read_next', 'Handler_read_prev', 'Handler_read_key')")
                    .compactMap { $0["Value"].flatMap { Int64(String(decoding: $0, as: UTF8.self)) } }.reduce(0, +)
            }
            let before = try indexRowsRead()
            let page = try graph.feed(of: 1, page: PageCursor(count: 5))
            let read = try indexRowsRead() - before
            let newest = Int64(1 + 20 * people)
            #expect(page == Array((newest - 4...newest).reversed()), "the newest of everyone's")
            #expect(read < 400, "\(read) index rows read for a page of 5 (all photos: 800)")
        }

        @Test func notificationsAreEachEventOnceAndGoWithWhatTheyTellOf() throws {
            let database = try APIHarness().database
            try accounts(database, 3)
            let store = MariaDBNotificationStore(database: database)
            let liked = NotificationEvent(kind: .favourite, recipient: 2, actor: 1, photoID: 5)
            let followed = NotificationEvent.follow(of: 2, by: 3)
            let mention = NotificationEvent(kind: .mention, recipient: 2, actor: 3, photoID: 5, commentID: 9)
            try database.execute("INSERT INTO comments (IdComment, IdPhoto, IdUser, text, created) VALUES (9, 5, 3, 'nice', 1)")
            let first = try #require(try store.record(liked, created: 10))
            #expect(try store.record(liked, created: 11) == nil, "once")
            let second = try #require(try store.record(followed, created: 12))
            let third = try #require(try store.record(mention, created: 13))
            _ = try store.record(NotificationEvent(kind: .favourite, recipient: 2, actor: 77, photoID: 5), created: 14)
            let all = Set(NotificationKind.allCases)
            let found = try store.notifications(for: 2, kinds: all, page: PageCursor(count: 10))
            #expect(found == [
                NotificationRecord(id: third, event: mention, actorName: Array("u3".utf8), text: Array("nice".utf8), created: 13),
                NotificationRecord(id: second, event: followed, actorName: Array("u3".utf8), text: nil, created: 12),
                NotificationRecord(id: first, event: liked, actorName: Array("u1".utf8), text: nil, created: 10),
            ], "the one by an account that is gone is not shown")
            #expect(try store.notifications(for: 2, kinds: [.follow, .favourite], page: PageCursor(count: 10)).map(\.id) == [second, first])
            #expect(try store.notifications(for: 2, kinds: all, actor: 1, page: PageCursor(count: 10)).map(\.id) == [first], "one actor's")
            #expect(try store.notifications(for: 2, kinds: all, page: PageCursor(before: third, count: 1)).map(\.id) == [second])
            #expect(try store.notifications(for: 1, kinds: all, page: PageCursor(count: 10)).isEmpty)
            try store.withdraw(liked)
            try store.withdrawMention(commentID: 9)
            #expect(try store.notifications(for: 2, kinds: all, page: PageCursor(count: 10)).map(\.id) == [second])
            _ = try store.record(liked, created: 20)
            _ = try store.record(mention, created: 21)
            try store.withdrawAll(photoID: 5)
            #expect(try store.notifications(for: 2, kinds: all, page: PageCursor(count: 10)).map(\.id) == [second])
            #expect(try !store.dismiss(id: second, for: 1), "someone else's")
            #expect(try store.dismiss(id: second, for: 2))
            _ = try store.record(followed, created: 30)
            _ = try store.record(NotificationEvent.follow(of: 1, by: 3), created: 31)
            #expect(try store.dismissAll(for: 2) == 1)
            #expect(try store.notifications(for: 1, kinds: all, page: PageCursor(count: 10)).count == 1, "only 2's went")
        }

        /// The commands on MariaDB: a follow, the home, the notifications.
        @Test func theCommandsOnMariaDB() throws {
            let phone = try APIHarness()
            try phone.send([("command", "register"), ("username", "bob"), ("password", "p")])
            try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
            #expect(try phone.body([("command", "upload"), ("title", "mine")], file: makeJPEG(width: 64, height: 48)) == #"{"successful":1}"#)
            try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
            #expect(try phone.body([("command", "feed")]) == #"{"result":[]}"#)
            #expect(try phone.body([("command", "follow"), ("IdUser", "2")])
                    == #"{"result":[{"IdUser":"2","username":"alice","photos":"1","followers":"1","following":"0","followed":"1"}]}"#)
            #expect(try phone.body([("command", "feed"), ("extras", "likes")])
                    == #"{"result":[{"IdPhoto":"2","title":"mine","IdUser":"2","username":"alice","likes":"0"}]}"#)
            try phone.send([("command", "like"), ("IdPhoto", "2")])
            try phone.send([("command", "login"), ("username", "alice"), ("password", "p")])
            let answer = try phone.body([("command", "notifications")])
            #expect(answer.hasPrefix(#"{"result":[{"id":"2","type":"favourite","IdUser":"1","username":"bob","IdPhoto":"2","IdComment":null"#), "\(answer)")
            #expect(answer.contains(#"{"id":"1","type":"follow","IdUser":"1","username":"bob","IdPhoto":null"#), "\(answer)")
            #expect(try phone.body([("command", "delete"), ("IdPhoto", "2")]) == #"{"successful":1}"#)
            #expect(try phone.rowCount("notifications") == 1, "the photo's went with it")
            #expect(try phone.body([("command", "dismiss"), ("all", "1")]) == #"{"successful":1}"#)
            #expect(try phone.rowCount("notifications") == 0)
        }

        @Test func theQueriesAreIndexRanges() throws {
            let database = try APIHarness().database
            try accounts(database, 200)
            try database.execute("INSERT INTO photos (IdUser, title) SELECT 1 + seq % 200, 't' FROM seq_1_to_20000")
            try database.execute("""
                INSERT INTO follows (follower, followee, created) SELECT 1 + seq % 200, 1 + (seq * 7) % 200, 0 FROM seq_1_to_2000 \
                ON DUPLICATE KEY UPDATE created = 0
                """)
            try database.execute("""
                INSERT IGNORE INTO notifications (recipient, kind, actor, IdPhoto, created) \
                SELECT 1 + seq % 200, 'favourite', 1 + (seq * 3) % 200, seq, 0 FROM seq_1_to_20000
                """)
            for table in ["login", "photos", "follows", "notifications"] { _ = try database.query("ANALYZE TABLE \(table)") }
            let page: [DatabaseValue] = [.int(0), .int(Int64.max), .int(50)]
            let kinds: [DatabaseValue] = [.int(7), .bytes(Array("favourite,follow,mention".utf8))]
            let anyone: [DatabaseValue] = kinds + [.int(0), .int(0)] + page, oneActor: [DatabaseValue] = kinds + [.int(3), .int(3)] + page
            // Newest first, and oldest first from `since` (`after`).
            let plans: [(String, [DatabaseValue], String)] = ["DESC", "ASC"].flatMap { order in [
                (MariaDBFollowStore.listSQL(of: "followee", showing: "follower", order: order), [.int(7)] + page, "followee_id"),
                (MariaDBFollowStore.listSQL(of: "follower", showing: "followee", order: order), [.int(7)] + page, "follower_id"),
                // Anyone's, and one actor's (the Mastodon API's account_id): the same range.
                (MariaDBNotificationStore.pageSQL(order: order), anyone, "recipient_id"),
                (MariaDBNotificationStore.pageSQL(order: order), oneActor, "recipient_id"),
            ] }
            let familiar: (String, [DatabaseValue], String) = (MariaDBFollowStore.familiarSQL, [.int(7), .int(8), .int(40)], "follower_id")
            for (sql, parameters, key) in plans + [familiar] {
                let first = try #require(try TestServices.explain(sql, parameters, database).first)
                let extra = first["Extra"].map { String(decoding: $0, as: UTF8.self) } ?? ""
                #expect(first["type"] == Array("range".utf8) || first["type"] == Array("ref".utf8), "\(sql): \(extra)")
                #expect(first["key"] == Array(key.utf8), "\(sql)")
                #expect(!extra.contains("filesort") && !extra.contains("temporary"), "\(sql): \(extra)")
            }
            // The feed reads each person's photos on IdUser_IdPhoto, never the whole table.
            for order in ["DESC", "ASC"] {
                let people = (0..<MariaDBFollowStore.feedGroup).flatMap { [DatabaseValue.int(Int64(7 + $0))] + page }
                let feed = try TestServices.explain(MariaDBFollowStore.feedSQL(order: order), people + [.int(50)], database)
                let photos = feed.filter { $0["table"] == Array("photos".utf8) }
                #expect(photos.count == MariaDBFollowStore.feedGroup, "\(feed.map(\.values))")
                #expect(photos.allSatisfy { $0["key"] == Array("IdUser_IdPhoto".utf8) }, "\(feed.map(\.values))")
            }
            try TestServices.resetTables(database)
        }
    }
}
