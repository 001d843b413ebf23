import Testing
@testable import IReporterKit
import TestSupport

/// The follow and notification endpoints on the in-memory stores, through
/// the declared commands: follows made through Mastodon are the form API's
/// and back; notifications page and dismiss as Mastodon's.
struct MastodonGraphTests {
    /// bob (1) and alice (2), and the statuses tests' way of calling the door.
    let door: MastodonStatusesTests

    init() throws { door = try MastodonStatusesTests() }

    var harness: AppHarness { door.harness }

    func body(_ answer: MastodonAnswer) -> String { String(decoding: answer.body, as: UTF8.self) }

    @Test func followingThroughMastodonIsTheSameFollow() throws {
        let bob = door.token(user: 1)
        let followed = door.call(.post, "/api/v1/accounts/2/follow", token: bob)
        #expect(followed.status == 200, "\(body(followed))")
        #expect(door.string(try door.json(followed)["id"]) == "2")
        #expect(try door.json(followed)["following"] == .bool(true))
        #expect(try door.json(followed)["followed_by"] == .bool(false))
        #expect(harness.follows.edges.map(\.follower) == [1], "the form API's follow")
        let relationships = door.call(.get, "/api/v1/accounts/relationships", token: door.token(), [("id[]", "1"), ("id[]", "9")])
        #expect(body(relationships).hasPrefix(#"[{"id":"1","following":false,"showing_reblogs":false,"notifying":false,"languages":null,"followed_by":true,"#),
                "\(body(relationships))")
        #expect(try door.ids(relationships) == ["1"], "no account 9: left out")
        let followers = door.call(.get, "/api/v1/accounts/2/followers")
        #expect(try door.ids(followers) == ["1"])
        // Each with its counts, which apps show under the name.
        guard case .array(let listed)? = try? door.json(followers), let follower = listed.first else { Issue.record("no follower"); return }
        #expect(follower["following_count"] == .number(Array("1".utf8)) && follower["followers_count"] == .number(Array("0".utf8)))
        #expect(try door.ids(door.call(.get, "/api/v1/accounts/1/following")) == ["2"])
        #expect(door.call(.get, "/api/v1/accounts/9/followers").status == 404)
        #expect(body(door.call(.post, "/api/v1/accounts/1/follow", token: bob)) == #"{"error":"You cannot follow yourself"}"#)
        #expect(door.call(.post, "/api/v1/accounts/2/follow", token: door.token("read", user: 1)).status == 403, "a read token")
        #expect(try door.json(door.call(.post, "/api/v1/accounts/2/unfollow", token: bob))["following"] == .bool(false))
        #expect(harness.follows.edges.isEmpty)
        #expect(body(door.call(.get, "/api/v1/follow_requests", token: bob)) == "[]")
    }

    /// A profile's "followed by … you know" (Ice Cubes, the official apps).
    @Test func familiarFollowersAreThoseYouFollowWhoFollowThem() throws {
        try door.harness.send([("command", "register"), ("username", "carol"), ("password", "p")])
        // bob (1) follows carol (3); carol and bob follow alice (2).
        #expect(door.call(.post, "/api/v1/accounts/3/follow", token: door.token(user: 1)).status == 200)
        #expect(door.call(.post, "/api/v1/accounts/2/follow", token: door.token(user: 3)).status == 200)
        #expect(door.call(.post, "/api/v1/accounts/2/follow", token: door.token(user: 1)).status == 200)
        let answer = door.call(.get, "/api/v1/accounts/familiar_followers", token: door.token(user: 1),
                               [("id[]", "x"), ("id[]", "2"), ("id[]", "3")])
        #expect(body(answer).hasPrefix(#"[{"id":"2","accounts":[{"id":"3","username":"carol","#), "\(body(answer))")
        #expect(body(answer).contains(#"{"id":"3","accounts":[]}"#), "\(body(answer))")
        #expect(door.call(.get, "/api/v1/accounts/familiar_followers", [("id[]", "2")]).status == 401)
    }

    @Test func followersPageWithLinks() throws {
        for name in ["carol", "dave", "erin"] {
            try harness.send([("command", "register"), ("username", name), ("password", "p")])
            try harness.send([("command", "follow"), ("IdUser", "2")])
        }
        let first = door.call(.get, "/api/v1/accounts/2/followers", [("limit", "2")])
        #expect(try door.ids(first) == ["5", "4"])
        let link = try #require(first.headers.first { $0.name == "Link" }?.value)
        #expect(link == #"<http://example.com/api/v1/accounts/2/followers?limit=2&max_id=2>; rel="next", "#
                + #"<http://example.com/api/v1/accounts/2/followers?limit=2&min_id=3>; rel="prev""#)
        #expect(try door.ids(door.call(.get, "/api/v1/accounts/2/followers", [("limit", "2"), ("max_id", "2")])) == ["3"])
    }

    /// From a review: account lists page by 40 and up to 80, as Mastodon's
    /// (a client that stops at a page shorter than asked for stopped at 40).
    /// Statuses stay at 20 and 40.
    @Test func accountListsPageAsMastodonsDo() throws {
        for n in 0..<85 {
            try harness.send([("command", "register"), ("username", "fan\(n)"), ("password", "p")])
            try harness.send([("command", "follow"), ("IdUser", "2")])
        }
        #expect(try door.ids(door.call(.get, "/api/v1/accounts/2/followers")).count == 40)
        #expect(try door.ids(door.call(.get, "/api/v1/accounts/2/followers", [("limit", "80")])).count == 80)
        #expect(try door.ids(door.call(.get, "/api/v1/accounts/2/followers", [("limit", "500")])).count == 80)
        let statuses = try TimelinePage(MastodonParameters(query: FormData()))
        #expect(statuses.limit == 20)
        var eighty = FormData()
        eighty.setField(Array("limit".utf8), Array("80".utf8))
        #expect(try TimelinePage(MastodonParameters(query: eighty)).limit == 40)
        #expect(try TimelinePage(MastodonParameters(query: eighty), limits: .accounts).limit == 80)
    }

    /// `account_id` (Mastodon.py's notifications(account_id=), the apps'
    /// notifications from one account): what that person did alone.
    @Test func notificationsOfOneAccount() throws {
        try door.harness.send([("command", "register"), ("username", "carol"), ("password", "p")])
        let photo = try #require(door.string(try door.post("Sunset")["id"]))
        #expect(door.call(.post, "/api/v1/statuses/\(photo)/favourite", token: door.token(user: 1)).status == 200)
        #expect(door.call(.post, "/api/v1/accounts/2/follow", token: door.token(user: 3)).status == 200)
        #expect(door.call(.post, "/api/v1/accounts/2/follow", token: door.token(user: 1)).status == 200)
        let alice = door.token()
        let bobs = door.call(.get, "/api/v1/notifications", token: alice, [("account_id", "1"), ("limit", "1")])
        #expect(try door.ids(bobs) == ["3"])
        #expect(bobs.headers.first { $0.name == "Link" }?.value.contains("account_id=1") == true, "the next page is bob's too")
        #expect(try door.ids(door.call(.get, "/api/v1/notifications", token: alice, [("account_id", "1"), ("max_id", "3")])) == ["1"])
        #expect(try door.ids(door.call(.get, "/api/v1/notifications", token: alice, [("account_id", "3")])) == ["2"])
        #expect(body(door.call(.get, "/api/v1/notifications", token: alice, [("account_id", "9")])) == "[]")
    }

    @Test func notificationsAreMastodonsWithTheirStatuses() throws {
        let status = try door.post("Sunset") // alice's photo 2
        let photo = try #require(door.string(status["id"]))
        let bob = door.token(user: 1)
        #expect(door.call(.post, "/api/v1/statuses/\(photo)/favourite", token: bob).status == 200)
        #expect(door.call(.post, "/api/v1/accounts/2/follow", token: bob).status == 200)
        #expect(door.call(.post, "/api/v1/statuses", token: bob, [("status", "Lovely"), ("in_reply_to_id", photo)]).status == 200)
        let alice = door.token()
        let all = door.call(.get, "/api/v1/notifications", token: alice)
        #expect(all.status == 200, "\(body(all))")
        guard case .array(let found) = try door.json(all) else { Issue.record("no list"); return }
        #expect(found.map { door.string($0["type"]) } == ["mention", "follow", "favourite"])
        #expect(found.map { door.string($0["account"]?["acct"]) } == ["bob", "bob", "bob"])
        #expect(door.string(found[2]["status"]?["id"]) == photo, "the liked photo")
        #expect(door.string(found[0]["status"]?["in_reply_to_id"]) == photo, "the comment, a reply to the photo")
        #expect(found[1]["status"] == .null)
        #expect(try door.ids(door.call(.get, "/api/v1/notifications", token: alice, [("types[]", "follow"), ("types[]", "mention")]))
                == ["3", "2"])
        #expect(try door.ids(door.call(.get, "/api/v1/notifications", token: alice, [("exclude_types[]", "mention")])) == ["2", "1"])
        #expect(body(door.call(.get, "/api/v1/notifications", token: alice, [("types[]", "reblog")])) == "[]")
        let page = door.call(.get, "/api/v1/notifications", token: alice, [("limit", "1"), ("max_id", "3")])
        #expect(try door.ids(page) == ["2"])
        #expect(page.headers.first { $0.name == "Link" }?.value.contains("max_id=2") == true)
        let mentions = door.call(.get, "/api/v1/notifications", token: alice, [("types[]", "mention"), ("types[]", "follow")])
        #expect(mentions.headers.first { $0.name == "Link" }?.value
                    .hasPrefix("<http://example.com/api/v1/notifications?types%5B%5D=mention&types%5B%5D=follow&max_id=2>") == true,
                "the next page is of the same types")
        #expect(door.string(try door.json(door.call(.get, "/api/v1/notifications/1", token: alice))["type"]) == "favourite")
        #expect(door.call(.get, "/api/v1/notifications/1", token: bob).status == 404, "not bob's")
        #expect(door.call(.get, "/api/v1/notifications/\(Int64.max)", token: alice).status == 404, "no id + 1 to overflow")
        #expect(door.call(.get, "/api/v1/notifications", token: door.token("read:statuses")).status == 403)
        #expect(body(door.call(.post, "/api/v1/notifications/1/dismiss", token: alice)) == "{}")
        #expect(door.call(.post, "/api/v1/notifications/1/dismiss", token: alice).status == 404)
        #expect(try door.ids(door.call(.get, "/api/v1/notifications", token: alice)) == ["3", "2"])
        #expect(body(door.call(.post, "/api/v1/notifications/clear", token: alice)) == "{}")
        #expect(harness.notifications.rows.isEmpty)
    }
}
