import Testing
@testable import IReporterKit
import TestSupport

/// The commands beyond the 2012 app's five (issue 15): the stream's cursors
/// and extras, comments, votes and deletion, on the in-memory stores.
struct ReactionCommandTests {
    let photo = makeJPEG(width: 64, height: 48)

    /// bob (1) and alice (2), logged out; alice's photos 2...(1 + count) titled by their id.
    func twoUsers(photos count: Int = 0, policy: AppServices.Policy = AppHarness.cheapPolicy) throws -> AppHarness {
        let phone = try AppHarness(policy: policy)
        try phone.send([("command", "register"), ("username", "bob"), ("password", "p")])
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        for _ in 0..<count {
            _ = try phone.photos.add(userID: 2, title: Array("t".utf8), publish: { _ in }, unpublish: { _ in })
        }
        try phone.send([("command", "logout")])
        return phone
    }

    func ids(_ body: String) -> [Int] {
        body.split(separator: "\"IdPhoto\":\"").dropFirst().map { Int($0.prefix { $0 != "\"" })! }
    }

    @Test func theStreamPagesWithCursors() throws {
        let phone = try twoUsers(photos: 120) // ids 2...121
        #expect(ids(try phone.body([("command", "stream")])) == Array((72...121).reversed()), "the original's 50")
        #expect(ids(try phone.body([("command", "stream"), ("count", "3")])) == [121, 120, 119])
        #expect(ids(try phone.body([("command", "stream"), ("before", "72"), ("count", "100")])) == Array((2...71).reversed()))
        #expect(ids(try phone.body([("command", "stream"), ("since", "118")])) == [121, 120, 119])
        #expect(ids(try phone.body([("command", "stream"), ("since", "10"), ("before", "14")])) == [13, 12, 11])
        #expect(ids(try phone.body([("command", "stream"), ("since", "121")])) == [])
        // `after`: the page just after the id (Mastodon's min_id), still newest first.
        #expect(ids(try phone.body([("command", "stream"), ("after", "118"), ("count", "2")])) == [120, 119], "from the cache")
        #expect(ids(try phone.body([("command", "stream"), ("after", "118")])) == [121, 120, 119])
        #expect(ids(try phone.body([("command", "stream"), ("after", "10"), ("count", "3")])) == [13, 12, 11], "from the store")
        #expect(ids(try phone.body([("command", "stream"), ("after", "10"), ("before", "14"), ("count", "2")])) == [12, 11])
        #expect(ids(try phone.body([("command", "stream"), ("after", "10"), ("since", "12"), ("count", "2")])) == [14, 13],
                "with since: the larger")
        #expect(ids(try phone.body([("command", "stream"), ("after", "10"), ("count", "2"), ("extras", "likes")])) == [12, 11])
        #expect(try phone.body([("command", "stream"), ("after", "-1")]).hasPrefix(#"{"error":"Invalid after"#))
        _ = try phone.photos.add(userID: 1, title: Array("b".utf8), publish: { _ in }, unpublish: { _ in })
        #expect(ids(try phone.body([("command", "stream"), ("IdUser", "1")])) == [122])
        #expect(ids(try phone.body([("command", "stream"), ("IdUser", "2"), ("count", "2")])) == [121, 120])
        #expect(ids(try phone.body([("command", "stream"), ("IdUser", "3")])) == [])
    }

    @Test func newCursorsAreStrict() throws {
        let phone = try twoUsers(photos: 2)
        let bad: [(String, String, String)] = [
            ("since", "-1", #"{"error":"Invalid since: a whole number from 0 is expected"}"#),
            ("before", "abc", #"{"error":"Invalid before: a whole number from 1 is expected"}"#),
            ("before", "0", #"{"error":"Invalid before: a whole number from 1 is expected"}"#),
            ("count", "0", #"{"error":"Invalid count: a whole number from 1 to 100 is expected"}"#),
            ("count", "101", #"{"error":"Invalid count: a whole number from 1 to 100 is expected"}"#),
            ("since", "99999999999999999999", #"{"error":"Invalid since: a whole number from 0 is expected"}"#),
            ("IdUser", " 1", #"{"error":"Invalid IdUser: a whole number from 1 is expected"}"#),
            ("extras", "likes,password", #"{"error":"Invalid extras: a comma list of likes, dislikes, comments, myvote, created, width, height, secret, server, description is expected"}"#),
        ]
        for (name, value, answer) in bad {
            #expect(try phone.body([("command", "stream"), (name, value)]) == answer, "\(name)=\(value)")
        }
        #expect(ids(try phone.body([("command", "stream"), ("before", "9223372036854775807")])) == [3, 2], "huge, but a number")
        #expect(try phone.body([("command", "stream"), ("since", ""), ("extras", "")]) == phone.body([("command", "stream")]),
                "empty fields are absent ones")
    }

    @Test func pollingForNewPhotosIsAnsweredFromTheCache() throws {
        var policy = AppHarness.cheapPolicy
        policy.streamCacheMillis = 60_000
        let phone = try twoUsers(photos: 3, policy: policy)
        #expect(ids(try phone.body([("command", "stream"), ("since", "4")])) == [])
        _ = try phone.photos.add(userID: 2, title: Array("behind".utf8), publish: { _ in }, unpublish: { _ in })
        #expect(ids(try phone.body([("command", "stream"), ("since", "4")])) == [], "the cached stream answered")
        phone.counters.bumpStreamGeneration() // what an upload through any worker does
        #expect(ids(try phone.body([("command", "stream"), ("since", "4")])) == [5])
        #expect(ids(try phone.body([("command", "stream"), ("since", "2"), ("count", "1")])) == [5])
    }

    @Test func extrasAddFieldsAndOnlyThem() throws {
        let phone = try twoUsers()
        try phone.send([("command", "login"), ("username", "alice"), ("password", "p")])
        try phone.send([("command", "upload"), ("title", "new")], file: makeJPEG(width: 64, height: 48))
        _ = try phone.photos.add(userID: 1, title: Array("old".utf8), publish: { _ in }, unpublish: { _ in })
        try phone.send([("command", "like"), ("IdPhoto", "2")])
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "nice")])
        let created = try #require(phone.photos.details[2]?.created)
        #expect(try phone.body([("command", "stream"), ("extras", "height,likes,myvote,dislikes,comments,created,width")]) == """
            {"result":[{"IdPhoto":"3","title":"old","IdUser":"1","username":"bob","likes":"0","dislikes":"0","comments":"0",\
            "myvote":"0","created":null,"width":null,"height":null},\
            {"IdPhoto":"2","title":"new","IdUser":"2","username":"alice","likes":"1","dislikes":"0","comments":"1",\
            "myvote":"1","created":"\(created)","width":"64","height":"48"}]}
            """)
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "2"), ("extras", "likes")])
                == #"{"result":[{"IdPhoto":"2","title":"new","IdUser":"2","username":"alice","likes":"1"}]}"#)
        // The sizes' names: the upload's secret, and one given now to the photo stored without one.
        let secret = try #require(phone.photos.photoSecrets[2])
        for extras in ["server,secret", "secret,server"] {
            let body = try phone.body([("command", "stream"), ("extras", extras)])
            let oldSecret = try #require(phone.photos.photoSecrets[3], "given when first asked")
            #expect(body == """
                {"result":[{"IdPhoto":"3","title":"old","IdUser":"1","username":"bob","secret":"\(oldSecret)","server":"000000"},\
                {"IdPhoto":"2","title":"new","IdUser":"2","username":"alice","secret":"\(secret)","server":"000000"}]}
                """)
        }
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "2"), ("extras", "secret")])
                == #"{"result":[{"IdPhoto":"2","title":"new","IdUser":"2","username":"alice","secret":"\#(secret)"}]}"#)
        // The alt text (the Mastodon-compatible API's description), as stored; null without one.
        try phone.services.media.setDescription(Array("a \"red\" door\n".utf8), ofPhoto: 2)
        phone.counters.bumpStreamGeneration() // as the API's media update does
        #expect(try phone.body([("command", "stream"), ("extras", "description,likes")]) == #"""
            {"result":[{"IdPhoto":"3","title":"old","IdUser":"1","username":"bob","likes":"0","description":null},\#
            {"IdPhoto":"2","title":"new","IdUser":"2","username":"alice","likes":"1","description":"a \"red\" door\n"}]}
            """#, "in the extras' own order")
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "2"), ("extras", "description")])
                == #"{"result":[{"IdPhoto":"2","title":"new","IdUser":"2","username":"alice","description":"a \"red\" door\n"}]}"#)
        try phone.send([("command", "logout")])
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "2"), ("extras", "myvote")])
                == #"{"result":[{"IdPhoto":"2","title":"new","IdUser":"2","username":"alice","myvote":null}]}"#,
                "no session: whose vote is unknown")
    }

    @Test func theNewestPhotosCountsAndTheViewersVotesAreCachedUntilAVote() throws {
        var policy = AppHarness.cheapPolicy
        policy.streamCacheMillis = 60_000
        let phone = try twoUsers(photos: 1, policy: policy)
        try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
        let stream: [(String, String)] = [("command", "stream"), ("extras", "likes,myvote")]
        let photo = #"{"IdPhoto":"2","title":"t","IdUser":"2","username":"alice""#
        #expect(try phone.body(stream) == #"{"result":["# + photo + #","likes":"0","myvote":"0"}]}"#)
        _ = try phone.photos.setVote(.like, photoID: 2, userID: 2) // behind the server's back: the cache answers
        #expect(try phone.body(stream) == #"{"result":["# + photo + #","likes":"0","myvote":"0"}]}"#)
        try phone.send([("command", "like"), ("IdPhoto", "2")]) // through any worker: read back at once
        #expect(try phone.body(stream) == #"{"result":["# + photo + #","likes":"2","myvote":"1"}]}"#)
        try phone.send([("command", "login"), ("username", "alice"), ("password", "p")])
        #expect(try phone.body(stream) == #"{"result":["# + photo + #","likes":"2","myvote":"1"}]}"#, "alice's own vote")
        _ = try phone.photos.setVote(nil, photoID: 2, userID: 2) // behind the server's back again
        #expect(try phone.body(stream) == #"{"result":["# + photo + #","likes":"2","myvote":"1"}]}"#,
                "alice's vote is kept with the cached photos")
        phone.counters.bumpStreamGeneration() // any upload, vote or comment through any worker
        #expect(try phone.body(stream) == #"{"result":["# + photo + #","likes":"1","myvote":"0"}]}"#)
    }

    @Test func aVoteShowsInTheVotersNextStreamThroughEveryWorker() throws {
        var policy = AppHarness.cheapPolicy
        policy.streamCacheMillis = 60_000
        let phone = try twoUsers(photos: 2, policy: policy) // photos 2 and 3
        let workers = [phone.api, IReporterAPI(services: phone.services)] // each with its own caches
        let stream: [(String, String)] = [("command", "stream"), ("extras", "likes,myvote")]
        func votes(_ worker: IReporterAPI) throws -> [String] {
            let body = try phone.body(stream, through: worker)
            return body.split(separator: "\"myvote\":").dropFirst().map { String($0.prefix { $0 != "}" }) }
        }
        try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
        for worker in workers { #expect(try votes(worker) == [#""0""#, #""0""#]) }
        try phone.send([("command", "like"), ("IdPhoto", "3")], through: workers[0])
        for worker in workers { #expect(try votes(worker) == [#""1""#, #""0""#], "bob's like, on either worker") }
        try phone.send([("command", "dislike"), ("IdPhoto", "2")], through: workers[1])
        for worker in workers { #expect(try votes(worker) == [#""1""#, #""-1""#]) }
        #expect(try phone.body([("command", "stream"), ("extras", "myvote")], through: workers[1]).hasSuffix(
            #""username":"alice","myvote":"-1"}]}"#), "other fields: an answer of their own")
        try phone.send([("command", "login"), ("username", "alice"), ("password", "p")])
        for worker in workers { #expect(try votes(worker) == [#""0""#, #""0""#], "alice's votes, not bob's") }
        try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
        try phone.send([("command", "unvote"), ("IdPhoto", "3")], through: workers[1])
        for worker in workers { #expect(try votes(worker) == [#""0""#, #""-1""#]) }
        try phone.send([("command", "logout")])
        for worker in workers { #expect(try votes(worker) == ["null", "null"], "no session: no one's votes") }
    }

    @Test func votesAreOnePerPersonAndIdempotent() throws {
        let phone = try twoUsers(photos: 1)
        #expect(try phone.body([("command", "like"), ("IdPhoto", "2")]) == #"{"error":"Authorization required"}"#)
        try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
        let liked = #"{"result":[{"IdPhoto":"2","likes":"1","dislikes":"0","comments":"0","myvote":"1"}]}"#
        #expect(try phone.body([("command", "like"), ("IdPhoto", "2")]) == liked)
        #expect(try phone.body([("command", "like"), ("IdPhoto", "2")]) == liked, "idempotent")
        #expect(try phone.body([("command", "dislike"), ("IdPhoto", "2")])
                == #"{"result":[{"IdPhoto":"2","likes":"0","dislikes":"1","comments":"0","myvote":"-1"}]}"#)
        #expect(try phone.body([("command", "unvote"), ("IdPhoto", "2")])
                == #"{"result":[{"IdPhoto":"2","likes":"0","dislikes":"0","comments":"0","myvote":"0"}]}"#)
        #expect(try phone.body([("command", "like"), ("IdPhoto", "9")]) == #"{"error":"No such photo"}"#)
        #expect(try phone.body([("command", "like"), ("IdPhoto", "99999999999")]) == #"{"error":"No such photo"}"#)
        #expect(try phone.body([("command", "like")]) == #"{"error":"Missing IdPhoto"}"#)
        #expect(try phone.body([("command", "like"), ("IdPhoto", "2x")]) == #"{"error":"Invalid IdPhoto: a whole number from 1 is expected"}"#)
        #expect(phone.photos.votes.isEmpty)
    }

    @Test func likedListsThePhotosOneLikesNewestFirst() throws {
        let phone = try twoUsers(photos: 6) // ids 2...7
        #expect(try phone.body([("command", "liked")]) == #"{"error":"Authorization required"}"#)
        try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
        #expect(try phone.body([("command", "liked")]) == #"{"result":[]}"#)
        for id in [3, 6, 4, 7] { try phone.send([("command", "like"), ("IdPhoto", String(id))]) }
        try phone.send([("command", "dislike"), ("IdPhoto", "7")])
        try phone.send([("command", "dislike"), ("IdPhoto", "5")])
        #expect(ids(try phone.body([("command", "liked")])) == [6, 4, 3], "likes only, the newest photo first")
        #expect(ids(try phone.body([("command", "liked"), ("count", "2")])) == [6, 4])
        #expect(ids(try phone.body([("command", "liked"), ("before", "4")])) == [3])
        #expect(ids(try phone.body([("command", "liked"), ("since", "3")])) == [6, 4])
        #expect(ids(try phone.body([("command", "liked"), ("after", "3"), ("count", "1")])) == [4])
        #expect(try phone.body([("command", "liked"), ("before", "4"), ("extras", "likes,myvote")])
                == #"{"result":[{"IdPhoto":"3","title":"t","IdUser":"2","username":"alice","likes":"1","myvote":"1"}]}"#)
        try phone.send([("command", "login"), ("username", "alice"), ("password", "p")])
        #expect(try phone.body([("command", "liked")]) == #"{"result":[]}"#, "bob's likes are his")
        try phone.send([("command", "delete"), ("IdPhoto", "6")])
        try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
        #expect(ids(try phone.body([("command", "liked")])) == [4, 3], "a deleted photo is gone from them")
        #expect(try phone.body([("command", "liked"), ("count", "0")]).hasPrefix(#"{"error":"Invalid count"#))
    }

    @Test func voteFloodsAreRefused() throws {
        var policy = AppHarness.cheapPolicy
        policy.voteRateLimit = 3
        let phone = try twoUsers(photos: 1, policy: policy)
        try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
        for _ in 0..<3 { try phone.send([("command", "like"), ("IdPhoto", "2")]) }
        #expect(try phone.body([("command", "dislike"), ("IdPhoto", "2")]) == #"{"error":"Too many votes, please try again later"}"#)
        #expect(phone.photos.votes.values.map(\.rawValue) == [1], "the refused vote changed nothing")
    }

    @Test func commentsAreTextWithRules() throws {
        var policy = AppHarness.cheapPolicy
        policy.commentRateLimit = 5
        let phone = try twoUsers(photos: 1, policy: policy)
        #expect(try phone.body([("command", "comment"), ("IdPhoto", "2"), ("text", "hi")]) == #"{"error":"Authorization required"}"#)
        try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
        let script = #"<script>alert("x")</script> & é"#
        let answer = try phone.body([("command", "comment"), ("IdPhoto", "2"), ("text", script)])
        let created = try #require(phone.photos.commentRows.first?.created)
        #expect(answer == #"{"result":[{"IdComment":"1","IdPhoto":"2","IdUser":"1","username":"bob","text":"<script>alert(\"x\")<\/script> & \u00e9","created":""# + "\(created)\"}]}")
        #expect(phone.photos.commentRows.first?.text == Array(script.utf8), "stored as sent")
        let refused: [(String, String)] = [
            ("", #"{"error":"Comments cannot be empty"}"#),
            ("a\u{7}b", #"{"error":"Comments cannot contain control characters"}"#),
            (String(repeating: "x", count: 1001), #"{"error":"Comments are limited to 1000 bytes"}"#),
        ]
        for (text, error) in refused {
            #expect(try phone.body([("command", "comment"), ("IdPhoto", "2"), ("text", text)]) == error)
        }
        #expect(try phone.body([("command", "comment"), ("IdPhoto", "7"), ("text", "x")]) == #"{"error":"No such photo"}"#)
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "two")])
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "three")])
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "four")])
        #expect(try phone.body([("command", "comment"), ("IdPhoto", "2"), ("text", "five")])
                == #"{"error":"Too many comments, please try again later"}"#)
        #expect(phone.photos.commentRows.count == 4)
        let texts = { (body: String) in body.split(separator: "\"text\":\"").dropFirst().map { String($0.prefix { $0 != "\"" }) } }
        #expect(texts(try phone.body([("command", "comments"), ("IdPhoto", "2")])) == ["four", "three", "two", "<script>alert(\\"])
        #expect(texts(try phone.body([("command", "comments"), ("IdPhoto", "2"), ("before", "4"), ("count", "2")])) == ["three", "two"])
        #expect(texts(try phone.body([("command", "comments"), ("IdPhoto", "2"), ("since", "3")])) == ["four"])
        #expect(texts(try phone.body([("command", "comments"), ("IdPhoto", "2"), ("after", "1"), ("count", "2")])) == ["three", "two"])
        #expect(try phone.body([("command", "comments"), ("IdPhoto", "3")]) == #"{"result":[]}"#)
    }

    /// Issue 24: line breaks are kept (as LF) and answered JSON-escaped;
    /// issue 26: invisible or blank comments are refused.
    @Test func commentsKeepLineBreaksAndRefuseInvisibleText() throws {
        let phone = try twoUsers(photos: 1)
        try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
        let answer = try phone.body([("command", "comment"), ("IdPhoto", "2"), ("text", "first line\r\nsecond line")])
        #expect(answer.contains(#""text":"first line\nsecond line""#), "\(answer)")
        #expect(phone.photos.commentRows.first?.text == Array("first line\nsecond line".utf8), "stored with LF")
        #expect(try phone.body([("command", "comments"), ("IdPhoto", "2")]).contains(#""text":"first line\nsecond line""#))
        let refused: [(String, String)] = [
            ("   ", #"{"error":"Comments cannot be blank"}"#),
            ("\u{200B}", #"{"error":"Comments cannot contain invisible characters"}"#),
            ("a\u{2060}b", #"{"error":"Comments cannot contain invisible characters"}"#),
            ("a\u{FFF9}b", #"{"error":"Comments cannot contain invisible characters"}"#),
            (String(repeating: "x\n", count: 20) + "x", #"{"error":"Comments are limited to 20 lines"}"#),
            ("a\u{2028}b", #"{"error":"Comments cannot contain control characters"}"#),
        ]
        for (text, error) in refused {
            #expect(try phone.body([("command", "comment"), ("IdPhoto", "2"), ("text", text)]) == error)
        }
        #expect(phone.photos.commentRows.count == 1)
        #expect(try phone.body([("command", "comment"), ("IdPhoto", "2"), ("text", "👨‍👩‍👧 ❤️")]).contains(#""text":"\ud83d\udc68\u200d"#))
    }

    @Test func aCommentGoesByItsAuthorOrThePhotosOwner() throws {
        let phone = try twoUsers(photos: 1) // alice's photo 2
        try phone.send([("command", "register"), ("username", "carol"), ("password", "p")])
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "carol's")]) // 1
        try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "bob's")]) // 2
        #expect(try phone.body([("command", "uncomment"), ("IdComment", "1")])
                == #"{"error":"You can only remove your own comments and comments on your photos"}"#)
        #expect(phone.photos.commentRows.count == 2, "refused: nothing changed")
        #expect(try phone.body([("command", "uncomment"), ("IdComment", "2")]) == #"{"successful":1}"#)
        #expect(try phone.body([("command", "uncomment"), ("IdComment", "2")]) == #"{"error":"No such comment"}"#)
        try phone.send([("command", "login"), ("username", "alice"), ("password", "p")])
        #expect(try phone.body([("command", "uncomment"), ("IdComment", "1")]) == #"{"successful":1}"#, "the photo's owner")
        #expect(phone.photos.commentRows.isEmpty)
    }

    @Test func onlyTheOwnerDeletesAPhotoAndEverythingOnItGoes() throws {
        let phone = try twoUsers()
        try phone.send([("command", "login"), ("username", "alice"), ("password", "p")])
        try phone.send([("command", "upload"), ("title", "mine")], file: photo)
        try phone.send([("command", "login"), ("username", "bob"), ("password", "p")])
        try phone.send([("command", "like"), ("IdPhoto", "2")])
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "x")])
        #expect(try phone.body([("command", "delete"), ("IdPhoto", "2")]) == #"{"error":"You can only delete your own photos"}"#)
        #expect(phone.files.photos[2] != nil && phone.photos.rows.count == 1, "refused: nothing changed")
        try phone.send([("command", "login"), ("username", "alice"), ("password", "p")])
        _ = try phone.body([("command", "stream")]) // cached
        #expect(try phone.body([("command", "delete"), ("IdPhoto", "2")]) == #"{"successful":1}"#)
        #expect(phone.photos.rows.isEmpty && phone.photos.votes.isEmpty && phone.photos.commentRows.isEmpty)
        #expect(phone.photos.details.isEmpty && phone.files.photos.isEmpty)
        #expect(try phone.body([("command", "stream")]) == #"{"result":[]}"#, "the cache learnt of it")
        #expect(try phone.body([("command", "delete"), ("IdPhoto", "2")]) == #"{"error":"No such photo"}"#)
    }

    @Test func theOriginalFiveAnswerAsBefore() throws {
        // A form with only the original's fields never reaches the new code paths.
        let phone = try twoUsers(photos: 2)
        #expect(try phone.body([("command", "stream")])
                == #"{"result":[{"IdPhoto":"3","title":"t","IdUser":"2","username":"alice"},{"IdPhoto":"2","title":"t","IdUser":"2","username":"alice"}]}"#)
        #expect(try phone.body([("command", "stream"), ("IdPhoto", "-3abc")]) == #"{"result":[]}"#, "PHP's (int) as before")
    }
}
