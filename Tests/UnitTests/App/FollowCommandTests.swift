import Testing
@testable import IReporterKit
import TestSupport

/// The follow graph, the home feed and notifications (issue 28), on the
/// in-memory stores.
struct FollowCommandTests {
    /// bob (1), alice (2) and carol (3), logged out.
    func threeUsers(policy: AppServices.Policy = AppHarness.cheapPolicy) throws -> AppHarness {
        let phone = try AppHarness(policy: policy)
        for name in ["bob", "alice", "carol"] {
            try phone.send([("command", "register"), ("username", name), ("password", "p")])
        }
        try phone.send([("command", "logout")])
        return phone
    }

    func signIn(_ phone: AppHarness, _ name: String) throws {
        try phone.send([("command", "login"), ("username", name), ("password", "p")])
    }

    @discardableResult
    func addPhoto(_ phone: AppHarness, by userID: Int64) throws -> Int64 {
        try phone.photos.add(userID: userID, title: Array("t".utf8), publish: { _ in }, unpublish: { _ in })
    }

    func ids(_ body: String, _ key: String = "IdPhoto") -> [Int] {
        body.split(separator: "\"\(key)\":\"").dropFirst().map { Int($0.prefix { $0 != "\"" })! }
    }

    @Test func followAndUnfollowAreIdempotentAndAnswerTheCounts() throws {
        let phone = try threeUsers()
        #expect(try phone.body([("command", "follow"), ("IdUser", "2")]) == #"{"error":"Authorization required"}"#)
        try signIn(phone, "bob")
        let followed = #"{"result":[{"IdUser":"2","username":"alice","photos":"0","followers":"1","following":"0","followed":"1"}]}"#
        #expect(try phone.body([("command", "follow"), ("IdUser", "2")]) == followed)
        #expect(try phone.body([("command", "follow"), ("IdUser", "2")]) == followed, "the same again changes nothing")
        #expect(phone.follows.edges.count == 1)
        #expect(try phone.body([("command", "follow"), ("IdUser", "1")]) == #"{"error":"You cannot follow yourself"}"#)
        #expect(try phone.body([("command", "follow"), ("IdUser", "99")]) == #"{"error":"No such account"}"#)
        #expect(try phone.body([("command", "follow")]) == #"{"error":"Missing IdUser"}"#)
        let unfollowed = #"{"result":[{"IdUser":"2","username":"alice","photos":"0","followers":"0","following":"0","followed":"0"}]}"#
        #expect(try phone.body([("command", "unfollow"), ("IdUser", "2")]) == unfollowed)
        #expect(try phone.body([("command", "unfollow"), ("IdUser", "2")]) == unfollowed)
        #expect(phone.follows.edges.isEmpty)
    }

    /// `follow_limit`: one more is refused (before it is charged), the same
    /// again is no new follow, and an unfollow makes room.
    @Test func noOneFollowsMoreThanTheLimit() throws {
        var policy = AppHarness.cheapPolicy
        policy.followLimit = 1
        let phone = try threeUsers(policy: policy)
        try signIn(phone, "bob")
        try phone.send([("command", "follow"), ("IdUser", "2")])
        #expect(try phone.body([("command", "follow"), ("IdUser", "3")]) == #"{"error":"You cannot follow more than 1 accounts"}"#)
        #expect(try phone.body([("command", "follow"), ("IdUser", "2")]).contains(#""followed":"1""#), "the same again")
        try phone.send([("command", "unfollow"), ("IdUser", "2")])
        #expect(try phone.body([("command", "follow"), ("IdUser", "3")]).contains(#""followed":"1""#))
        #expect(phone.follows.edges.count == 1)
    }

    @Test func followFloodsAreRefused() throws {
        var policy = AppHarness.cheapPolicy
        policy.followRateLimit = 2
        let phone = try threeUsers(policy: policy)
        try signIn(phone, "bob")
        try phone.send([("command", "follow"), ("IdUser", "2")])
        try phone.send([("command", "unfollow"), ("IdUser", "2")])
        #expect(try phone.body([("command", "follow"), ("IdUser", "3")]) == #"{"error":"Too many follows, please try again later"}"#)
        #expect(try phone.body([("command", "follow"), ("IdUser", "1")]) == #"{"error":"You cannot follow yourself"}"#,
                "refused before it is charged")
        #expect(phone.follows.edges.isEmpty)
    }

    @Test func personShowsTheCountsAndWhetherTheViewerFollows() throws {
        let phone = try threeUsers()
        try addPhoto(phone, by: 2)
        try signIn(phone, "carol")
        try phone.send([("command", "follow"), ("IdUser", "2")])
        try phone.send([("command", "follow"), ("IdUser", "1")])
        try phone.send([("command", "logout")])
        #expect(try phone.body([("command", "person"), ("IdUser", "2")])
                == #"{"result":[{"IdUser":"2","username":"alice","photos":"1","followers":"1","following":"0","followed":null}]}"#)
        #expect(try phone.body([("command", "person"), ("IdUser", "3")])
                == #"{"result":[{"IdUser":"3","username":"carol","photos":"0","followers":"0","following":"2","followed":null}]}"#)
        try signIn(phone, "bob")
        #expect(try phone.body([("command", "person"), ("IdUser", "2")])
                == #"{"result":[{"IdUser":"2","username":"alice","photos":"1","followers":"1","following":"0","followed":"0"}]}"#)
        #expect(try phone.body([("command", "person"), ("IdUser", "7")]) == #"{"error":"No such account"}"#)
    }

    @Test func followersAndFollowingPageNewestFirst() throws {
        let phone = try threeUsers()
        try signIn(phone, "bob")
        try phone.send([("command", "follow"), ("IdUser", "2")])
        try phone.send([("command", "follow"), ("IdUser", "3")])
        try signIn(phone, "carol")
        try phone.send([("command", "follow"), ("IdUser", "2")])
        try phone.send([("command", "logout")])
        #expect(try phone.body([("command", "following"), ("IdUser", "1")])
                == #"{"result":[{"IdFollow":"2","IdUser":"3","username":"carol"},{"IdFollow":"1","IdUser":"2","username":"alice"}]}"#)
        #expect(ids(try phone.body([("command", "followers"), ("IdUser", "2")]), "IdUser") == [3, 1])
        #expect(ids(try phone.body([("command", "followers"), ("IdUser", "2"), ("count", "1")]), "IdUser") == [3])
        #expect(ids(try phone.body([("command", "followers"), ("IdUser", "2"), ("before", "3")]), "IdUser") == [1])
        #expect(ids(try phone.body([("command", "followers"), ("IdUser", "2"), ("since", "1")]), "IdUser") == [3])
        #expect(ids(try phone.body([("command", "following"), ("IdUser", "1"), ("after", "0"), ("count", "1")]), "IdUser") == [2],
                "the oldest edge: just after 0")
        #expect(try phone.body([("command", "followers"), ("IdUser", "3")]) == #"{"result":[{"IdFollow":"2","IdUser":"1","username":"bob"}]}"#)
        #expect(try phone.body([("command", "following"), ("IdUser", "9")]) == #"{"result":[]}"#)
    }

    @Test func theFeedHoldsTheFollowedAndYourOwnPhotosNewestFirst() throws {
        let phone = try threeUsers()
        let alices = try (0..<3).map { _ in try addPhoto(phone, by: 2) }
        let carols = try addPhoto(phone, by: 3)
        let bobs = try addPhoto(phone, by: 1)
        #expect(try phone.body([("command", "feed")]) == #"{"error":"Authorization required"}"#)
        try signIn(phone, "bob")
        #expect(ids(try phone.body([("command", "feed")])) == [Int(bobs)], "your own")
        try phone.send([("command", "follow"), ("IdUser", "2")])
        #expect(ids(try phone.body([("command", "feed")])) == [bobs, alices[2], alices[1], alices[0]].map { Int($0) })
        #expect(ids(try phone.body([("command", "feed"), ("count", "2"), ("before", String(alices[2]))]))
                == [alices[1], alices[0]].map { Int($0) })
        #expect(ids(try phone.body([("command", "feed"), ("since", String(alices[2]))])) == [Int(bobs)])
        #expect(ids(try phone.body([("command", "feed"), ("after", String(alices[0])), ("count", "1")])) == [Int(alices[1])])
        #expect(!ids(try phone.body([("command", "feed")])).contains(Int(carols)), "not followed")
        try phone.send([("command", "like"), ("IdPhoto", String(alices[0]))])
        #expect(try phone.body([("command", "feed"), ("before", String(alices[1])), ("extras", "likes,myvote")])
                == #"{"result":[{"IdPhoto":"\#(alices[0])","title":"t","IdUser":"2","username":"alice","likes":"1","myvote":"1"}]}"#)
        let stream = try phone.body([("command", "stream"), ("IdPhoto", String(bobs))])
        #expect(try phone.body([("command", "feed"), ("count", "1")]) == stream, "the stream's row shape")
    }

    @Test func theFeedIsCachedUntilSomethingChanges() throws {
        var policy = AppHarness.cheapPolicy
        policy.streamCacheMillis = 60_000
        let phone = try threeUsers(policy: policy)
        try addPhoto(phone, by: 2)
        try signIn(phone, "bob")
        #expect(ids(try phone.body([("command", "feed")])) == [])
        let behind = try addPhoto(phone, by: 1)
        #expect(ids(try phone.body([("command", "feed")])) == [], "the kept answer")
        try phone.send([("command", "follow"), ("IdUser", "2")]) // bumps the generation
        #expect(ids(try phone.body([("command", "feed")])) == [Int(behind), 2])
        phone.clock.advance(byMillis: 60_000)
        let later = try addPhoto(phone, by: 2)
        #expect(ids(try phone.body([("command", "feed")])) == [Int(later), Int(behind), 2], "at most stream_cache_ms old")
    }

    /// What each action tells whom.
    @Test func likesFollowsAndCommentsNotifyTheOwnerAndAreTakenBack() throws {
        let phone = try threeUsers()
        let photo = try addPhoto(phone, by: 2)
        try signIn(phone, "bob")
        try phone.send([("command", "like"), ("IdPhoto", String(photo))])
        try phone.send([("command", "like"), ("IdPhoto", String(photo))])
        try phone.send([("command", "follow"), ("IdUser", "2")])
        let comment = try phone.body([("command", "comment"), ("IdPhoto", String(photo)), ("text", "<b>nice</b>")])
        try signIn(phone, "alice")
        try phone.send([("command", "like"), ("IdPhoto", String(photo))]) // her own: nobody is told
        try phone.send([("command", "comment"), ("IdPhoto", String(photo)), ("text", "thanks")])
        let created = phone.notifications.rows.map(\.created)
        #expect(created.count == 3)
        #expect(try phone.body([("command", "notifications")]) == """
            {"result":[{"id":"3","type":"mention","IdUser":"1","username":"bob","IdPhoto":"\(photo)","IdComment":"1",\
            "text":"<b>nice<\\/b>","created":"\(created[2])"},\
            {"id":"2","type":"follow","IdUser":"1","username":"bob","IdPhoto":null,"IdComment":null,"text":null,"created":"\(created[1])"},\
            {"id":"1","type":"favourite","IdUser":"1","username":"bob","IdPhoto":"\(photo)","IdComment":null,"text":null,\
            "created":"\(created[0])"}]}
            """)
        #expect(comment.contains(#""IdComment":"1""#))
        #expect(ids(try phone.body([("command", "notifications"), ("types", "follow,favourite")]), "id") == [2, 1])
        #expect(ids(try phone.body([("command", "notifications"), ("before", "3"), ("count", "1")]), "id") == [2])
        #expect(ids(try phone.body([("command", "notifications"), ("after", "0"), ("count", "2")]), "id") == [2, 1])
        #expect(ids(try phone.body([("command", "notifications"), ("since", "0"), ("count", "2")]), "id") == [3, 2])
        #expect(try phone.body([("command", "notifications"), ("types", "boost")]) == #"{"error":"Invalid types"}"#)
        try signIn(phone, "bob")
        #expect(try phone.body([("command", "notifications")]) == #"{"result":[]}"#, "bob was told nothing")
        try phone.send([("command", "unvote"), ("IdPhoto", String(photo))])
        try phone.send([("command", "unfollow"), ("IdUser", "2")])
        try phone.send([("command", "uncomment"), ("IdComment", "1")])
        #expect(phone.notifications.rows.isEmpty)
        try phone.send([("command", "dislike"), ("IdPhoto", String(photo))])
        #expect(phone.notifications.rows.isEmpty, "a dislike tells nothing")
        try phone.send([("command", "like"), ("IdPhoto", String(photo))])
        try phone.send([("command", "dislike"), ("IdPhoto", String(photo))])
        #expect(phone.notifications.rows.isEmpty, "a like turned dislike is taken back")
    }

    /// A like sent again changes nothing: the notification its owner
    /// dismissed stays dismissed (it came back, and was pushed live again).
    @Test func aLikeSentAgainDoesNotTellAgain() throws {
        let phone = try threeUsers()
        let photo = try addPhoto(phone, by: 2)
        try signIn(phone, "bob")
        try phone.send([("command", "like"), ("IdPhoto", String(photo))])
        let generation = phone.counters.streamGeneration
        try signIn(phone, "alice")
        #expect(try phone.body([("command", "dismiss"), ("id", "1")]).contains("successful"))
        try signIn(phone, "bob")
        #expect(try phone.body([("command", "like"), ("IdPhoto", String(photo))]).contains(#""likes":"1""#))
        #expect(phone.notifications.rows.isEmpty, "dismissed, and not told again")
        #expect(phone.counters.streamGeneration == generation, "no change: the cached streams stay")
    }

    /// The notifications, with another request's doing landing just before
    /// this one records its notification (after this one's commit).
    final class NotificationsMeanwhile: NotificationStore {
        let store: InMemoryNotificationStore
        var beforeRecording: (() throws -> Void)?
        init(_ store: InMemoryNotificationStore) { self.store = store }

        func record(_ event: NotificationEvent, created: Int64) throws -> Int64? {
            try beforeRecording?()
            beforeRecording = nil
            return try store.record(event, created: created)
        }
        func withdraw(_ event: NotificationEvent) throws { try store.withdraw(event) }
        func withdrawMention(commentID: Int64) throws { try store.withdrawMention(commentID: commentID) }
        func withdrawAll(photoID: Int64) throws { try store.withdrawAll(photoID: photoID) }
        func notifications(for recipient: Int64, kinds: Set<NotificationKind>, actor: Int64?,
                           page: PageCursor) throws -> [NotificationRecord] {
            try store.notifications(for: recipient, kinds: kinds, actor: actor, page: page)
        }
        func dismiss(id: Int64, for recipient: Int64) throws -> Bool { try store.dismiss(id: id, for: recipient) }
        func dismissAll(for recipient: Int64) throws -> Int { try store.dismissAll(for: recipient) }
        func forget(userID: Int64) throws { try store.forget(userID: userID) }
    }

    /// A like and its undoing sent together (two taps, two devices): the
    /// undoing commits and withdraws between the like's commit and its
    /// notification. The like's request asks again and withdraws it.
    @Test func aLikeOrFollowUndoneMeanwhileLeavesNoNotification() throws {
        let phone = try threeUsers()
        let photo = try addPhoto(phone, by: 2)
        try signIn(phone, "bob")
        let meanwhile = NotificationsMeanwhile(phone.notifications)
        var services = phone.services
        services.notifications = meanwhile
        let worker = IReporterAPI(services: services)
        meanwhile.beforeRecording = {
            _ = try phone.photos.setVote(nil, photoID: photo, userID: 1)
            try phone.notifications.withdraw(.favourite(of: try #require(try phone.photos.photo(id: photo)), by: 1))
        }
        try phone.send([("command", "like"), ("IdPhoto", String(photo))], through: worker)
        #expect(phone.notifications.rows.isEmpty, "the like was undone: nothing to tell")
        meanwhile.beforeRecording = {
            _ = try phone.follows.unfollow(2, by: 1)
            try phone.notifications.withdraw(.follow(of: 2, by: 1))
        }
        try phone.send([("command", "follow"), ("IdUser", "2")], through: worker)
        #expect(phone.notifications.rows.isEmpty, "the follow was undone: nothing to tell")
        try phone.send([("command", "follow"), ("IdUser", "2")], through: worker)
        #expect(phone.notifications.rows.map(\.event.kind) == [.follow], "a follow that stands is told")
    }

    @Test func deletingAPhotoRemovesItsNotifications() throws {
        let phone = try threeUsers()
        try signIn(phone, "alice")
        try phone.send([("command", "upload"), ("title", "mine")], file: makeJPEG(width: 64, height: 48))
        try signIn(phone, "bob")
        try phone.send([("command", "like"), ("IdPhoto", "2")])
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "hi")])
        try phone.send([("command", "follow"), ("IdUser", "2")])
        #expect(phone.notifications.rows.count == 3)
        try signIn(phone, "alice")
        #expect(try phone.body([("command", "delete"), ("IdPhoto", "2")]) == #"{"successful":1}"#)
        #expect(phone.notifications.rows.map(\.event.kind) == [.follow])
    }

    @Test func dismissRemovesOnlyYourOwn() throws {
        let phone = try threeUsers()
        try signIn(phone, "bob")
        try phone.send([("command", "follow"), ("IdUser", "2")])
        try phone.send([("command", "follow"), ("IdUser", "3")])
        try signIn(phone, "carol")
        try phone.send([("command", "follow"), ("IdUser", "2")])
        // alice has 1 and 3, carol has 2.
        #expect(try phone.body([("command", "dismiss"), ("id", "1")]) == #"{"error":"No such notification"}"#, "alice's")
        #expect(try phone.body([("command", "dismiss")]) == #"{"error":"Missing id"}"#)
        #expect(try phone.body([("command", "dismiss"), ("all", "yes")]) == #"{"error":"Invalid all"}"#)
        #expect(try phone.body([("command", "dismiss"), ("id", "2")]) == #"{"successful":1}"#)
        try signIn(phone, "alice")
        #expect(try phone.body([("command", "dismiss"), ("id", "3")]) == #"{"successful":1}"#)
        #expect(ids(try phone.body([("command", "notifications")]), "id") == [1])
        #expect(try phone.body([("command", "dismiss"), ("all", "1")]) == #"{"successful":1}"#)
        #expect(phone.notifications.rows.isEmpty)
    }

    /// A live feed that keeps what it was given.
    final class RecordingLiveFeed: LiveFeed {
        var messages: [(channel: String?, body: String)] = []
        func publish(_ message: [UInt8]) { messages.append((nil, String(decoding: message, as: UTF8.self))) }
        func publish(_ message: [UInt8], toNotificationsOf userID: Int64) {
            messages.append((notificationChannel(of: userID), String(decoding: message, as: UTF8.self)))
        }
        func notificationChannel(of userID: Int64) -> String { "notifications-of-\(userID)" }
    }

    @Test func eachNewNotificationIsPublishedOnItsRecipientsChannel() throws {
        let live = RecordingLiveFeed()
        let phone = try threeUsers()
        var services = phone.services
        services.live = live
        let api = IReporterAPI(services: services)
        try signIn(phone, "bob")
        try phone.send([("command", "follow"), ("IdUser", "2")], through: api)
        try phone.send([("command", "follow"), ("IdUser", "2")], through: api)
        #expect(live.messages.map(\.channel) == ["notifications-of-2"], "once: the second follow told nothing new")
        let created = try #require(phone.notifications.rows.first?.created)
        #expect(live.messages.first?.body == """
            {"result":[{"id":"1","type":"follow","IdUser":"1","username":"bob","IdPhoto":null,"IdComment":null,"text":null,\
            "created":"\(created)"}]}
            """)
        #expect(try phone.body([("command", "notification_channel")], through: api)
                == #"{"result":[{"channel":"\/iReporter\/live\/notifications-of-1"}]}"#)
        #expect(try phone.body([("command", "notification_channel")]) == #"{"result":[]}"#, "no live feed")
    }

    @Test func notificationChannelsAreNamedByAKeyedHash() throws {
        let key = String(repeating: "k", count: 16)
        let publisher = try #require(NchanPublisher(url: "http://127.0.0.1:1/ireporter-publish", key: key))
        let channel = publisher.notificationChannel(of: 7)
        #expect(channel == "notifications-" + Digest.sha256.hmacHex(key: Array(key.utf8), Array("notifications:7".utf8)).prefix(32))
        #expect(channel.count == "notifications-".count + 32)
        #expect(channel != publisher.notificationChannel(of: 8))
        let other = try #require(NchanPublisher(url: "http://127.0.0.1:1/ireporter-publish", key: key + "x"))
        #expect(channel != other.notificationChannel(of: 7), "another key, another name")
        // RFC 4231, test case 2.
        #expect(Digest.sha256.hmacHex(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }
}
