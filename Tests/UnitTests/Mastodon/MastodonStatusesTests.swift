#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// The statuses, media, timelines and accounts endpoints on the in-memory
/// stores: each runs the declared commands (what the form API sees, the
/// Mastodon API sees, and back), pages as Mastodon pages, refuses what we
/// do not have in Mastodon's shape.
struct MastodonStatusesTests {
    let harness: AppHarness
    let mastodon: MastodonAPI
    let media = InMemoryMediaStore()
    /// The times stored (`Idempotency-Key`'s hour).
    let wallClock = ManualClock(Instant(millis: 1_700_000_000_000))

    /// bob (1) and alice (2). `photos`: the store the API reads, around the harness's.
    init(policy: AppServices.Policy = AppHarness.cheapPolicy, decodeGate: DecodeGate? = nil,
         photos: ((InMemoryPhotoStore) -> any PhotoStore)? = nil) throws {
        harness = try AppHarness(hashesPasswords: false, policy: policy, decodeGate: decodeGate)
        var services = harness.services
        if let photos { services.photos = photos(harness.photos) }
        services.media = media
        services.wallClock = wallClock
        mastodon = MastodonAPI(api: IReporterAPI(services: services))
        try harness.send([("command", "register"), ("username", "bob"), ("password", "p")])
        try harness.send([("command", "register"), ("username", "alice"), ("password", "p")])
    }

    func token(_ scopes: String = "read write follow", user: Int64 = 2) -> String {
        harness.tokens.issue(AccessGrant(userID: user, appID: 1, scopes: OAuthScopes(parsing: scopes)!))
    }

    func call(_ method: HTTPMethod, _ path: String, token: String? = nil, _ fields: [(String, String)] = [],
              file: [UInt8]? = nil, idempotencyKey: String? = nil) -> MastodonAnswer {
        var body = FormData()
        for (name, value) in fields { body.setField(Array(name.utf8), Array(value.utf8)) }
        if let file {
            let path = harness.scratch.write(".upload-\(file.count)", file)
            body.addFile(Array("file".utf8), UploadedFile(filename: Array("p".utf8), contentType: Array("image/jpeg".utf8),
                                                          spoolPath: path, size: file.count))
        }
        let answer = mastodon.answer(MastodonRequest(method: method, path: path, parameters: MastodonParameters(query: FormData(), body: body),
                                                     authorization: token.map { "Bearer \($0)" }, siteURL: "http://example.com/",
                                                     headers: { $0 == "HTTP_IDEMPOTENCY_KEY" ? idempotencyKey : nil }))
        for path in body.spooledPaths { unlink(path) }
        return answer
    }

    func json(_ answer: MastodonAnswer, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        try JSONParser.parse(answer.body)
    }

    func string(_ value: JSONValue?) -> String? {
        if case .string(let bytes)? = value { String(decoding: bytes, as: UTF8.self) } else { nil }
    }

    func ids(_ answer: MastodonAnswer) throws -> [String] {
        guard case .array(let statuses) = try json(answer) else { return [] }
        return statuses.compactMap { string($0["id"]) }
    }

    /// Posts a photo through media + statuses as alice: its status.
    func post(_ caption: String, token: String? = nil, description: String? = nil) throws -> JSONValue {
        let token = token ?? self.token()
        let uploaded = call(.post, "/api/v2/media", token: token, description.map { [("description", $0)] } ?? [],
                            file: makeJPEG(width: 64, height: 48))
        #expect(uploaded.status == 200, "\(String(decoding: uploaded.body, as: UTF8.self))")
        let mediaID = try #require(string(try json(uploaded)["id"]))
        let posted = call(.post, "/api/v1/statuses", token: token, [("status", caption), ("media_ids[]", mediaID)])
        #expect(posted.status == 200, "\(String(decoding: posted.body, as: UTF8.self))")
        return try json(posted)
    }

    /// A PHP-era title cut inside its last character: the form API's null
    /// (PHP's json_encode), the status's content without that character.
    @Test func aTitleThatIsNoUTF8IsShownAsItsBytesAllow() throws {
        let id = try harness.photos.add(userID: 2, title: Array(Array("Crème ☕".utf8).dropLast(1)), publish: { _ in }, unpublish: { _ in })
        #expect(try harness.body([("command", "stream"), ("IdPhoto", String(id))]).contains(#""title":null"#))
        #expect(string(try json(call(.get, "/api/v1/statuses/\(id)"))["content"]) == "<p>Crème </p>")
    }

    @Test func aPhotoPostedWithItsMediaIsInEveryDoor() throws {
        let status = try post("Sunset", description: "The sun over the sea")
        let id = try #require(string(status["id"]))
        #expect(string(status["content"]) == "<p>Sunset</p>")
        #expect(string(status["account"]?["acct"]) == "alice")
        guard case .array(let attachments)? = status["media_attachments"], let attachment = attachments.first else {
            Issue.record("no attachment"); return
        }
        #expect(string(attachment["id"]) == id, "once posted, a media's id is its photo's")
        #expect(string(attachment["description"]) == "The sun over the sea")
        #expect(string(attachment["url"])?.hasPrefix("http://example.com/iReporter/photos/000000/\(id)_") == true)
        // The form API's stream has it, with its title.
        #expect(try harness.body([("command", "stream")]).contains(#""IdPhoto":"\#(id)","title":"Sunset""#))
        #expect(media.photoDescriptions[Int64(id)!] == Array("The sun over the sea".utf8))
        // The media is used up.
        let again = call(.post, "/api/v1/statuses", token: token(), [("status", "x"), ("media_ids[]", "1000000000000001")])
        #expect(again.status == 422)
    }

    /// Blank fields are none, as Mastodon reads them: a form-encoding app
    /// sends an empty `media_ids[]` with a reply, an empty `in_reply_to_id`
    /// with a post.
    @Test func blankFieldsAreNone() throws {
        let media = try #require(string(try json(call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 8, height: 8)))["id"]))
        let post = call(.post, "/api/v1/statuses", token: token(), [("status", "Blank"), ("in_reply_to_id", ""), ("media_ids[]", media)])
        #expect(post.status == 200, "\(String(decoding: post.body, as: UTF8.self))")
        #expect(try json(post)["in_reply_to_id"] == .null)
        let photo = try #require(string(try json(post)["id"]))
        let reply = call(.post, "/api/v1/statuses", token: token(user: 1), [("status", "Nice"), ("in_reply_to_id", photo), ("media_ids[]", "")])
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        #expect(string(try json(reply)["in_reply_to_id"]) == photo)
    }

    /// A phone that lost the answer posts again with the same key: the
    /// status the first post made, for an hour, for that account alone.
    @Test func aPostRepeatedWithItsIdempotencyKeyAnswersTheFirstStatus() throws {
        let uploaded = call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 64, height: 48))
        let mediaID = try #require(string(try json(uploaded)["id"]))
        let fields = [("status", "Retried"), ("media_ids[]", mediaID)]
        let first = call(.post, "/api/v1/statuses", token: token(), fields, idempotencyKey: "post-1")
        let photo = try #require(string(try json(first)["id"]))
        let again = call(.post, "/api/v1/statuses", token: token(), fields, idempotencyKey: "post-1")
        #expect(again.status == 200, "\(String(decoding: again.body, as: UTF8.self))")
        #expect(string(try json(again)["id"]) == photo)
        #expect(call(.post, "/api/v1/statuses", token: token(), fields, idempotencyKey: "post-2").status == 422,
                "another key posts anew: the media is posted already")
        // A reply (a comment) is made once too.
        let reply = [("status", "Nice"), ("in_reply_to_id", photo)]
        let comment = try #require(string(try json(call(.post, "/api/v1/statuses", token: token(user: 1), reply, idempotencyKey: "r"))["id"]))
        #expect(string(try json(call(.post, "/api/v1/statuses", token: token(user: 1), reply, idempotencyKey: "r"))["id"]) == comment)
        #expect(try json(call(.get, "/api/v1/statuses/\(photo)"))["replies_count"] == .number(Array("1".utf8)))
        // Another account's key of the same text is its own.
        let alices = try #require(string(try json(call(.post, "/api/v1/statuses", token: token(), reply, idempotencyKey: "r"))["id"]))
        #expect(alices != comment)
        // After the hour the key is forgotten: a new comment.
        wallClock.advance(bySeconds: PostIdempotencyKey.seconds + 1)
        #expect(string(try json(call(.post, "/api/v1/statuses", token: token(user: 1), reply, idempotencyKey: "r"))["id"]) != comment)
        #expect(try json(call(.get, "/api/v1/statuses/\(photo)"))["replies_count"] == .number(Array("3".utf8)))
        // A key whose status is gone answers 404, as Mastodon's does.
        let another = try #require(string(try json(call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 8, height: 8)))["id"]))
        let gone = [("status", "Gone"), ("media_ids[]", another)]
        let goneID = try #require(string(try json(call(.post, "/api/v1/statuses", token: token(), gone, idempotencyKey: "post-3"))["id"]))
        #expect(call(.delete, "/api/v1/statuses/\(goneID)", token: token()).status == 200)
        #expect(call(.post, "/api/v1/statuses", token: token(), gone, idempotencyKey: "post-3").status == 404)
    }

    /// Two posts with one key at once made two statuses (a review): the
    /// second, while the first is being made, is told so (409, as the
    /// Idempotency-Key draft answers) and its retry gets the first's status;
    /// a post that failed lets its key go.
    @Test func aPostWithAKeyAlreadyUnderWayIsTold409() throws {
        let uploaded = call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 64, height: 48))
        let mediaID = try #require(string(try json(uploaded)["id"]))
        let fields = [("status", "Once"), ("media_ids[]", mediaID)]
        var during: MastodonAnswer?
        harness.files.beforeNextPublish = { during = self.call(.post, "/api/v1/statuses", token: self.token(), fields, idempotencyKey: "k") }
        let first = call(.post, "/api/v1/statuses", token: token(), fields, idempotencyKey: "k")
        #expect(first.status == 200)
        let second = try #require(during)
        #expect(second.status == 409)
        #expect(string(try json(second)["error"])?.contains("on its way") == true)
        #expect(string(try json(call(.post, "/api/v1/statuses", token: token(), fields, idempotencyKey: "k"))["id"])
                == string(try json(first)["id"]), "the retry: the first's status")
        #expect(try harness.photos.newest(limit: 10).count == 1)
        // A failed post lets its key go: the next try with it posts.
        let reply = [("status", "On nothing"), ("in_reply_to_id", "999")]
        #expect(call(.post, "/api/v1/statuses", token: token(), reply, idempotencyKey: "r").status == 404)
        let photo = try #require(string(try json(first)["id"]))
        #expect(call(.post, "/api/v1/statuses", token: token(), [("status", "Now"), ("in_reply_to_id", photo)], idempotencyKey: "r").status == 200)
    }

    /// From a review: the photo stored, reading its status back failed (the
    /// database gone that moment, a 503). The key used to be let go with
    /// the failure, so the app's retry with it found its media used, was
    /// refused, and the person posted the photo again.
    @Test func aPostStoredButNotReadBackIsTheAnswerToItsRetry() throws {
        var meanwhile: PhotoStoreMeanwhile!
        let test = try MastodonStatusesTests(photos: { meanwhile = PhotoStoreMeanwhile($0); return meanwhile })
        let uploaded = test.call(.post, "/api/v2/media", token: test.token(), file: makeJPEG(width: 64, height: 48))
        let fields = [("status", "Read back"), ("media_ids[]", try #require(test.string(try test.json(uploaded)["id"])))]
        meanwhile.failsFirstReadAfterAdd = ServiceUnavailable()
        let first = test.call(.post, "/api/v1/statuses", token: test.token(), fields, idempotencyKey: "k")
        #expect(first.status == 503, "\(String(decoding: first.body, as: UTF8.self))")
        let retry = test.call(.post, "/api/v1/statuses", token: test.token(), fields, idempotencyKey: "k")
        #expect(retry.status == 200, "\(String(decoding: retry.body, as: UTF8.self))")
        #expect(test.string(try test.json(retry)["content"]) == "<p>Read back</p>")
        #expect(try test.harness.photos.newest(limit: 10).count == 1, "one photo")
    }

    /// `upload` consumes the claimed file; a failure after that (a sync,
    /// the COMMIT) removes the photo it made: the media waits again, and
    /// its next post makes the photo. The failure is the server's: 503, which
    /// apps retry (a 422, "your post is invalid", they dropped or drafted).
    @Test func aMediaWhosePostFailedAfterItsFileWasUsedWaitsAgain() throws {
        let uploaded = call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 64, height: 48))
        let mediaID = try #require(string(try json(uploaded)["id"]))
        let url = try #require(string(try json(uploaded)["url"]))
        let checked = call(.get, String(url.dropFirst("http://example.com".count))).body
        let fields = [("status", "Second try"), ("media_ids[]", mediaID)]
        harness.files.failsNextPublish = true
        let failed = call(.post, "/api/v1/statuses", token: token(), fields)
        #expect(failed.status == 503)
        #expect(string(try json(failed)["error"]) == "Upload on server problem", "upload's own answer")
        #expect(call(.get, "/api/v1/media/\(mediaID)", token: token()).status == 200, "waiting")
        #expect(!checked.isEmpty && call(.get, String(url.dropFirst("http://example.com".count))).body == checked, "its file, as it was")
        let posted = call(.post, "/api/v1/statuses", token: token(), fields)
        #expect(posted.status == 200, "\(String(decoding: posted.body, as: UTF8.self))")
        #expect(string(try json(posted)["content"]) == "<p>Second try</p>")
        #expect(harness.files.spoolFiles.isEmpty, "nothing left in the spool area")
    }

    /// A post whose photo was not stored within `upload_deadline`: the app
    /// (told 503) posts again, and finds its media waiting.
    @Test func aPostPastTheUploadDeadlineLeavesItsMediaWaiting() throws {
        let uploaded = call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 64, height: 48))
        let mediaID = try #require(string(try json(uploaded)["id"]))
        let fields = [("status", "Slow disk"), ("media_ids[]", mediaID)]
        harness.files.beforeNextPublish = { self.harness.clock.advance(bySeconds: 51) }
        let late = call(.post, "/api/v1/statuses", token: token(), fields, idempotencyKey: "slow")
        #expect(late.status == 503)
        #expect(string(try json(late)["error"]) == "The server took too long to store the photo and did not keep it, please send it again")
        #expect(harness.photos.rows.isEmpty && harness.files.photos.isEmpty)
        #expect(call(.get, "/api/v1/media/\(mediaID)", token: token()).status == 200, "waiting")
        let posted = call(.post, "/api/v1/statuses", token: token(), fields, idempotencyKey: "slow")
        #expect(posted.status == 200, "\(String(decoding: posted.body, as: UTF8.self))")
        #expect(harness.photos.rows.count == 1)
        #expect(harness.files.spoolFiles.isEmpty, "nothing left in the spool area")
    }

    /// Anyone on the host may list the upload folder: a waiting media's file
    /// is named by a digest of its key, never the key its picture's URL asks
    /// for. One an older version named by the key is renamed at its first use.
    @Test func aWaitingMediasFileNameDoesNotTellItsKey() throws {
        let uploaded = call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 64, height: 48))
        let mediaID = try #require(string(try json(uploaded)["id"]))
        let url = try #require(string(try json(uploaded)["url"]))
        let key = String(url.split(separator: "/").last!.dropLast(".jpg".count))
        let names = harness.files.spoolFiles
        #expect(names.count == 1 && !names.contains { $0.contains(key) }, "\(names)")
        let picture = call(.get, String(url.dropFirst("http://example.com".count)))
        #expect(picture.status == 200 && !picture.body.isEmpty)
        // As an older version named it.
        let directory = harness.files.spoolDirectory
        #expect(rename("\(directory)/\(names[0])", "\(directory)/\(MediaEndpoints.filePrefix)\(key)") == 0)
        #expect(call(.get, String(url.dropFirst("http://example.com".count))).body == picture.body)
        #expect(harness.files.spoolFiles == names, "renamed at its first use")
        #expect(call(.post, "/api/v1/statuses", token: token(), [("status", "Posted"), ("media_ids[]", mediaID)]).status == 200)
        #expect(harness.files.spoolFiles.isEmpty)
    }

    /// The media's row removed while its post ran (its account deleted) and
    /// the post failing: its file is not put back to wait for a row that is
    /// gone (it stayed a day, a review found).
    @Test func aMediaWhoseRowWentWhileItsPostFailedLeavesNoFile() throws {
        let uploaded = call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 64, height: 48))
        let mediaID = try #require(string(try json(uploaded)["id"]))
        let pendingID = try #require(Int64(mediaID)) - MediaEndpoints.pendingBase
        harness.files.failsNextPublish = true
        harness.files.beforeNextPublish = { try media.removePending(id: pendingID) }
        #expect(call(.post, "/api/v1/statuses", token: token(), [("status", "Gone"), ("media_ids[]", mediaID)]).status == 503)
        #expect(harness.files.spoolFiles.isEmpty, "no file left waiting")
    }

    /// From a review: alt text is shown to everyone under the photo, yet a
    /// right-to-left override, zero-width characters or blanks were stored.
    /// It follows a comment's rules now.
    @Test func aDescriptionFollowsTheRulesOfTextEveryoneSees() throws {
        for (description, problem) in [("\u{202E}god A", "cannot contain control characters"),
                                       ("A\u{200B}dog", "cannot contain invisible characters"),
                                       (" \u{2800} ", "cannot be blank (send it empty to remove it)")] {
            let refused = call(.post, "/api/v2/media", token: token(), [("description", description)], file: makeJPEG(width: 64, height: 48))
            #expect(try refused.status == 422 && string(json(refused)["error"]) == "Validation failed: Description \(problem)",
                    "\(String(decoding: refused.body, as: UTF8.self))")
        }
        let status = try post("Dogs", description: "A dog\r\nrunning 🐕‍🦺")
        let attachment = status["media_attachments"]?[0]
        #expect(string(attachment?["description"]) == "A dog\nrunning 🐕‍🦺", "line breaks as a comment's, an emoji sequence kept")
    }

    /// Once the photo is committed the post is made: a database gone for
    /// the media's clean-up answers the status (a phone told otherwise posts
    /// again and is told the media is posted already).
    @Test func aPostWhoseCleanUpFailedAfterTheCommitIsAnsweredPosted() throws {
        let uploaded = call(.post, "/api/v2/media", token: token(), [("description", "A dog")], file: makeJPEG(width: 64, height: 48))
        let mediaID = try #require(string(try json(uploaded)["id"]))
        media.failingCleanUps = 2
        let posted = call(.post, "/api/v1/statuses", token: token(), [("status", "Posted"), ("media_ids[]", mediaID)])
        #expect(posted.status == 200, "\(String(decoding: posted.body, as: UTF8.self))")
        #expect(string(try json(posted)["content"]) == "<p>Posted</p>")
        #expect(media.failingCleanUps == 0, "both were tried")
        #expect(try harness.photos.newest(limit: 10).count == 1, "one photo")
    }

    /// An upload that fails decoding stores nothing, so the waiting media's
    /// cap never stops a loop of them: each is charged to preview's hourly
    /// limit before any decode, failed or not.
    @Test func mediaUploadsAreChargedBeforeTheirDecodeFailedOrNot() throws {
        var policy = AppHarness.cheapPolicy
        policy.previewRateLimit = 2
        let tests = try MastodonStatusesTests(policy: policy)
        let broken = Array(makePNG(width: 40, height: 30).prefix(60))
        for _ in 0..<2 {
            #expect(tests.call(.post, "/api/v1/media", token: tests.token(), file: broken).status == 422)
        }
        let refused = tests.call(.post, "/api/v2/media", token: tests.token(), file: makeJPEG(width: 8, height: 8))
        #expect(refused.status == 429)
        #expect(String(decoding: refused.body, as: UTF8.self) == #"{"error":"Too many photos uploaded, please try again later"}"#)
        #expect(tests.call(.post, "/api/v2/media", token: tests.token(user: 1), file: makeJPEG(width: 8, height: 8)).status == 200,
                "another user's count is their own")
    }

    /// A PNG's or HEIC's conversion holds gd's whole image and its canvas:
    /// it takes one of the decode slots, as `upload`'s decodes do.
    @Test func aPNGIsConvertedInOneOfTheDecodeSlots() throws {
        var policy = AppHarness.cheapPolicy
        policy.imageDecodeConcurrency = 1
        let gate: DecodeGate? = DecodeGate()
        let tests = try MastodonStatusesTests(policy: policy, decodeGate: gate)
        // Another worker's upload holds the one slot a while, and says so before it gives it back.
        let holding = ProcessSignal(), releasing = ProcessSignal()
        let worker = ChildProcess {
            try? gate.decoding(limit: 1) {
                holding.send()
                usleep(300_000)
                releasing.send()
            }
            return 0
        }
        #expect(holding.wait(), "the other worker holds the slot")
        // Cut short: gd refuses it, so that no decode of `upload`'s follows (which waits for a slot too).
        let png = tests.call(.post, "/api/v1/media", token: tests.token(), file: Array(makePNG(width: 40, height: 30).prefix(60)))
        #expect(png.status == 422, "\(String(decoding: png.body, as: UTF8.self))")
        #expect(releasing.wait(millis: 0), "the conversion waited for the slot")
        #expect(worker.wait(seconds: 10) == 0)
    }

    @Test func aPNGIsMadeAJPEGAndAnythingElseRefusedClearly() throws {
        let png = call(.post, "/api/v1/media", token: token(), file: makePNG(width: 40, height: 30))
        #expect(png.status == 200, "\(String(decoding: png.body, as: UTF8.self))")
        #expect(try json(png)["meta"]?["original"]?["size"] == .string(Array("40x30".utf8)))
        let url = try #require(string(try json(png)["url"]))
        let served = call(.get, String(url.dropFirst("http://example.com".count)))
        #expect(served.status == 200 && served.contentType == "image/jpeg")
        #expect(jpegSize(served.body).map { [$0.0, $0.1] } == [40, 30], "made a JPEG")
        #expect(call(.get, String(url.dropFirst("http://example.com".count).dropLast(6)) + "00.jpg").status == 404, "another key")
        let text = call(.post, "/api/v1/media", token: token(), file: Array("hello".utf8))
        #expect(text.status == 422)
        #expect(string(try json(text)["error"]) == "Validation failed: File content type is invalid (JPEG, PNG or HEIC expected)")
        let broken = call(.post, "/api/v1/media", token: token(), file: Array(makeJPEG(width: 64, height: 48).prefix(200)))
        #expect(broken.status == 422)
        #expect(string(try json(broken)["error"]) == "The photo is not a valid JPEG image", "upload's own check and message")
    }

    @Test func textAloneIsRefusedAndAReadTokenCannotPost() throws {
        let text = call(.post, "/api/v1/statuses", token: token(), [("status", "Just words")])
        #expect(text.status == 422)
        #expect(string(try json(text)["error"])?.contains("a post needs a photo") == true)
        #expect(call(.post, "/api/v1/statuses", token: token("read"), [("status", "x")]).status == 403)
        #expect(call(.post, "/api/v2/media", token: token("read"), file: makeJPEG(width: 8, height: 8)).status == 403)
        #expect(call(.post, "/api/v1/statuses", [("status", "x")]).status == 401)
    }

    /// A poll is refused, not posted without its options (their nested
    /// names, `poll[options][]`, were once never read).
    @Test func aPollIsRefused() throws {
        let uploaded = call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 64, height: 48))
        let mediaID = try #require(string(try json(uploaded)["id"]))
        let poll = call(.post, "/api/v1/statuses", token: token(), [("status", "Which?"), ("media_ids[]", mediaID),
                                                                     ("poll[options][]", "a"), ("poll[options][]", "b"),
                                                                     ("poll[expires_in]", "300")])
        #expect(poll.status == 422)
        #expect(string(try json(poll)["error"]) == "Polls are not supported by this server")
    }

    @Test func theCaptionHasTheTitlesRules() throws {
        let uploaded = call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 64, height: 48))
        let mediaID = try #require(string(try json(uploaded)["id"]))
        let refused = call(.post, "/api/v1/statuses", token: token(), [("status", "a\u{7}b"), ("media_ids[]", mediaID)])
        #expect(refused.status == 422)
        #expect(string(try json(refused)["error"]) == "Titles cannot contain control characters")
        // Refused, the media still waits for its post.
        #expect(call(.post, "/api/v1/statuses", token: token(), [("status", "ab"), ("media_ids[]", mediaID)]).status == 200)
    }

    @Test func repliesAreCommentsBothWays() throws {
        let photo = try #require(string(try post("Dog")["id"]))
        let reply = try json(call(.post, "/api/v1/statuses", token: token(user: 1), [("status", "Nice <b>dog</b>"), ("in_reply_to_id", photo)]))
        let replyID = try #require(string(reply["id"]))
        #expect(replyID == "1000000000000001")
        #expect(string(reply["in_reply_to_id"]) == photo)
        #expect(string(reply["in_reply_to_account_id"]) == "2")
        #expect(string(reply["content"]) == "<p>Nice &lt;b&gt;dog&lt;/b&gt;</p>")
        // The form API's comments show it; one made there shows in the context.
        #expect(try harness.body([("command", "comments"), ("IdPhoto", photo)]).contains(#""text":"Nice <b>dog<\/b>""#))
        try harness.send([("command", "login"), ("username", "bob"), ("password", "p")])
        try harness.send([("command", "comment"), ("IdPhoto", photo), ("text", "From the app")])
        let context = try json(call(.get, "/api/v1/statuses/\(photo)/context"))
        guard case .array(let descendants)? = context["descendants"] else { Issue.record("no descendants"); return }
        #expect(descendants.compactMap { string($0["content"]) } == ["<p>Nice &lt;b&gt;dog&lt;/b&gt;</p>", "<p>From the app</p>"],
                "oldest first")
        #expect(try json(call(.get, "/api/v1/statuses/\(replyID)/context"))["ancestors"]?.arrayCount == 1)
        #expect(string(try json(call(.get, "/api/v1/statuses/\(replyID)"))["in_reply_to_id"]) == photo)
        #expect(try json(call(.get, "/api/v1/statuses/\(photo)"))["replies_count"] == .number(Array("2".utf8)))
        // Another's comment on another's photo is not found, as another's
        // photo is (Mastodon's 404; uncomment's refusal was a 403).
        let fromTheApp = try #require(descendants.last.flatMap { string($0["id"]) })
        try harness.send([("command", "register"), ("username", "carol"), ("password", "p")])
        #expect(call(.delete, "/api/v1/statuses/\(fromTheApp)", token: token(user: 3)).status == 404)
        #expect(try harness.body([("command", "comments"), ("IdPhoto", photo)]).contains("From the app"), "still there")
        // Removing the reply is `uncomment`.
        #expect(call(.delete, "/api/v1/statuses/\(replyID)", token: token(user: 1)).status == 200)
        #expect(call(.get, "/api/v1/statuses/\(replyID)").status == 404)
    }

    /// Apps start a reply with the mentions of the people replied to.
    @Test func aReplysLeadingMentionsOfThoseRepliedToAreNotItsText() throws {
        let photo = try #require(string(try post("Dog")["id"]))
        let first = try json(call(.post, "/api/v1/statuses", token: token(user: 1), [("status", "@alice Nice dog"), ("in_reply_to_id", photo)]))
        #expect(string(first["content"]) == "<p>Nice dog</p>")
        let commentID = try #require(string(first["id"]))
        let second = try json(call(.post, "/api/v1/statuses", token: token(),
                                   [("status", "@bob@example.com @alice Thanks, @bob"), ("in_reply_to_id", commentID)]))
        #expect(string(second["content"]) == "<p>Thanks, @bob</p>", "later mentions stay")
        let other = try json(call(.post, "/api/v1/statuses", token: token(), [("status", "@carol look"), ("in_reply_to_id", photo)]))
        #expect(string(other["content"]) == "<p>@carol look</p>", "someone not replied to stays")
        #expect(StatusEndpoints.withoutLeadingMentions(Array("@alicea hi".utf8), of: [Array("alice".utf8)], domain: "example.com")
                == Array("@alicea hi".utf8), "a longer name is not alice")
    }

    @Test func favouritesAreLikes() throws {
        let photo = try #require(string(try post("Cat")["id"]))
        let bob = token(user: 1)
        let liked = try json(call(.post, "/api/v1/statuses/\(photo)/favourite", token: bob))
        #expect(liked["favourited"] == .bool(true))
        #expect(liked["favourites_count"] == .number(Array("1".utf8)))
        #expect(try harness.body([("command", "stream"), ("extras", "likes")]).contains(#""likes":"1""#))
        guard case .array(let likers) = try json(call(.get, "/api/v1/statuses/\(photo)/favourited_by")) else { return }
        #expect(likers.compactMap { string($0["username"]) } == ["bob"])
        #expect(likers.first?["statuses_count"] == .number(Array("0".utf8)) && likers.first?["created_at"] != nil)
        let alicesOwn = try json(call(.post, "/api/v1/statuses/\(photo)/favourite", token: token()))
        #expect(alicesOwn["favourites_count"] == .number(Array("2".utf8)))
        guard case .array(let both) = try json(call(.get, "/api/v1/statuses/\(photo)/favourited_by")),
              let alice = both.first(where: { string($0["username"]) == "alice" }) else { Issue.record("no alice"); return }
        #expect(alice["statuses_count"] == .number(Array("1".utf8)), "with her counts, not 0")
        // Paged as Mastodon pages it, by the likers' ids: alice (2), then bob (1).
        let first = call(.get, "/api/v1/statuses/\(photo)/favourited_by", [("limit", "1")])
        #expect(try ids(first) == ["2"])
        let link = try #require(first.headers.first { $0.name == "Link" }?.value)
        #expect(link.hasPrefix("<http://example.com/api/v1/statuses/\(photo)/favourited_by?limit=1&max_id=2>; rel=\"next\""), "\(link)")
        #expect(try ids(call(.get, "/api/v1/statuses/\(photo)/favourited_by", [("limit", "1"), ("max_id", "2")])) == ["1"])
        _ = call(.post, "/api/v1/statuses/\(photo)/unfavourite", token: token())
        #expect(try json(call(.get, "/api/v1/statuses/\(photo)", token: token()))["favourited"] == .bool(false), "alice's view")
        let unliked = try json(call(.post, "/api/v1/statuses/\(photo)/unfavourite", token: bob))
        #expect(unliked["favourited"] == .bool(false))
        #expect(unliked["favourites_count"] == .number(Array("0".utf8)))
        #expect(call(.post, "/api/v1/statuses/\(photo)/reblog", token: bob).status == 422)
    }

    /// A post the person marked sensitive or put behind a content warning
    /// is refused: published unmarked, it would show what they asked to hide.
    @Test func aSensitivePostIsRefusedNotPublishedUnmarked() throws {
        let mediaID = try #require(string(try json(call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 64, height: 48)))["id"]))
        for fields in [[("sensitive", "true")], [("spoiler_text", "spoilers")]] {
            let refused = call(.post, "/api/v1/statuses", token: token(), [("status", "Hidden"), ("media_ids[]", mediaID)] + fields)
            #expect(try refused.status == 422 && string(json(refused)["error"])?.contains("Sensitive posts") == true)
        }
        #expect(try harness.photos.newest(limit: 10).isEmpty)
        let posted = call(.post, "/api/v1/statuses", token: token(), [("status", "Shown"), ("media_ids[]", mediaID), ("sensitive", "false"),
                                                                       ("spoiler_text", "")])
        #expect(posted.status == 200, "unmarked, as most clients send it")
    }

    /// A caption is the photo's title: its line breaks become spaces, and one
    /// over the title's 100 bytes is refused (the media still waits) rather
    /// than cut as the 2012 app's title is.
    @Test func aCaptionIsOneLineOfAtMostTheTitlesBytes() throws {
        #expect(string(try post("Two\r\nlines\nhere")["content"]) == "<p>Two lines here</p>")
        let mediaID = try #require(string(try json(call(.post, "/api/v2/media", token: token(), file: makeJPEG(width: 64, height: 48)))["id"]))
        let long = String(repeating: "я", count: 51) // 102 bytes, 51 characters
        let refused = call(.post, "/api/v1/statuses", token: token(), [("status", long), ("media_ids[]", mediaID)])
        #expect(try refused.status == 422 && string(json(refused)["error"])?.contains("at most 100 bytes") == true)
        #expect(call(.get, "/api/v1/media/\(mediaID)", token: token()).status == 200, "still waiting")
        #expect(call(.post, "/api/v1/statuses", token: token(), [("status", String(long.dropLast())), ("media_ids[]", mediaID)]).status == 200)
    }

    @Test func deletingAStatusDeletesThePhoto() throws {
        let photo = try #require(string(try post("Gone soon")["id"]))
        #expect(call(.delete, "/api/v1/statuses/\(photo)", token: token(user: 1)).status == 404, "not bob's: Mastodon's 404")
        let deleted = call(.delete, "/api/v1/statuses/\(photo)", token: token())
        #expect(deleted.status == 200)
        #expect(string(try json(deleted)["id"]) == photo)
        #expect(string(try json(deleted)["text"]) == "Gone soon", "the source text, for delete & re-draft")
        #expect(call(.get, "/api/v1/statuses/\(photo)").status == 404)
        #expect(try harness.body([("command", "stream")]) == #"{"result":[]}"#)
    }

    /// "Delete & re-draft" (Tusky, the official apps): the app posts the
    /// deleted status's media again, from the DELETE's answer.
    @Test func aDeletedPhotosMediaWaitsToBeRedrafted() throws {
        let photo = try #require(string(try post("First take", description: "A dog")["id"]))
        let deleted = try json(call(.delete, "/api/v1/statuses/\(photo)", token: token()))
        guard case .array(let attachments)? = deleted["media_attachments"], let copy = attachments.first,
              let copyID = string(copy["id"]), let copyURL = string(copy["url"]) else {
            Issue.record("no media in \(deleted)")
            return
        }
        #expect(Int64(copyID)! > MediaEndpoints.pendingBase, "a media waiting again, not the deleted photo")
        #expect(string(copy["description"]) == "A dog")
        let file = String(copyURL.dropFirst("http://example.com".count))
        #expect(call(.get, file).contentType == "image/jpeg", "its file is served as a waiting media's")
        #expect(call(.get, "/api/v1/statuses/\(photo)").status == 404)
        let again = call(.post, "/api/v1/statuses", token: token(), [("status", "Second take"), ("media_ids[]", copyID)])
        #expect(again.status == 200, "\(String(decoding: again.body, as: UTF8.self))")
        guard case .array(let posted)? = try json(again)["media_attachments"], let reposted = posted.first else {
            Issue.record("no media posted")
            return
        }
        #expect(string(reposted["description"]) == "A dog")
        guard case .object(let meta)? = reposted["meta"], case .object(let original)? = JSONValue.object(meta)["original"] else {
            Issue.record("no meta")
            return
        }
        #expect(JSONValue.object(original)["size"] == .string(Array("64x48".utf8)))
        let stream = try harness.body([("command", "stream")])
        #expect(stream.contains(#""title":"Second take""#), "\(stream)")

        // delete_media=true (Mastodon 4.4): nothing kept.
        let other = try #require(string(try post("No redraft")["id"]))
        let gone = try json(call(.delete, "/api/v1/statuses/\(other)", token: token(), [("delete_media", "true")]))
        guard case .array(let left)? = gone["media_attachments"] else { Issue.record("\(gone)"); return }
        let leftIDs = left.compactMap { string($0["id"]) }
        #expect(leftIDs == [other], "the deleted photo's own media, nothing kept")
        #expect(try media.pending(ofUser: 2).isEmpty, "only the posted copy was ever kept")
    }

    @Test func timelinesPageAsMastodonPages() throws {
        for n in 1...5 { _ = try harness.photos.add(userID: Int64(n % 2 + 1), title: Array("p\(n)".utf8), publish: { _ in }, unpublish: { _ in }) }
        // ids 2...6, newest first; alice (2) has 2, 4, 6.
        #expect(try ids(call(.get, "/api/v1/timelines/public")) == ["6", "5", "4", "3", "2"])
        let first = call(.get, "/api/v1/timelines/public", [("limit", "2")])
        #expect(try ids(first) == ["6", "5"])
        #expect(first.headers.first { $0.name == "Link" }?.value
                == #"<http://example.com/api/v1/timelines/public?limit=2&max_id=5>; rel="next", <http://example.com/api/v1/timelines/public?limit=2&min_id=6>; rel="prev""#)
        #expect(try ids(call(.get, "/api/v1/timelines/public", [("limit", "2"), ("max_id", "5")])) == ["4", "3"])
        #expect(try ids(call(.get, "/api/v1/timelines/public", [("since_id", "4")])) == ["6", "5"])
        #expect(try ids(call(.get, "/api/v1/timelines/public", [("min_id", "4")])) == ["6", "5"])
        #expect(call(.get, "/api/v1/timelines/public", [("max_id", "2")]).headers.allSatisfy { $0.name != "Link" }, "an empty page has no links")
        #expect(try ids(call(.get, "/api/v1/timelines/public", [("limit", "1000")])).count == 5, "at most 40")
        #expect(try ids(call(.get, "/api/v1/accounts/2/statuses", [("limit", "2")])) == ["6", "4"])
        #expect(try ids(call(.get, "/api/v1/accounts/2/statuses", [("pinned", "true")])) == [])
        #expect(call(.get, "/api/v1/accounts/99/statuses").status == 404)
        #expect(try ids(call(.get, "/api/v1/timelines/tag/sunset")) == [])
        // Home: alice's own, then bob's once she follows him.
        #expect(try ids(call(.get, "/api/v1/timelines/home", token: token())) == ["6", "4", "2"])
        try harness.send([("command", "login"), ("username", "alice"), ("password", "p")])
        try harness.send([("command", "follow"), ("IdUser", "1")])
        #expect(try ids(call(.get, "/api/v1/timelines/home", token: token(), [("limit", "4")])) == ["6", "5", "4", "3"])
        #expect(call(.get, "/api/v1/timelines/home").status == 401)
    }

    @Test func theNewestPublicPageIsKeptWhileNothingChanges() throws {
        let photo = try #require(string(try post("Kept", description: "one")["id"]))
        func shown() throws -> String? {
            string(try json(call(.get, "/api/v1/timelines/public"))[0]?["media_attachments"]?[0]?["description"])
        }
        #expect(try shown() == "one")
        try media.setDescription(Array("two".utf8), ofPhoto: Int64(photo)!) // behind the API's back
        #expect(try shown() == "one", "kept")
        harness.clock.advance(byMillis: Int64(harness.services.policy.streamCacheMillis))
        #expect(try shown() == "two", "for stream_cache_ms at most")
        _ = call(.put, "/api/v1/media/\(photo)", token: token(), [("description", "three")])
        #expect(try shown() == "three", "a change through the API shows at once")
        _ = try harness.photos.add(userID: 1, title: Array("bob's".utf8), publish: { _ in }, unpublish: { _ in })
        try harness.send([("command", "login"), ("username", "bob"), ("password", "p")])
        try harness.send([("command", "like"), ("IdPhoto", photo)])
        #expect(try ids(call(.get, "/api/v1/timelines/public")) == [String(Int64(photo)! + 1), photo], "a vote is a change")
    }

    @Test func theNewestHomePageIsKeptForEachViewer() throws {
        let photo = try #require(string(try post("Kept", description: "one")["id"]))
        func shown(to token: String) throws -> String? {
            string(try json(call(.get, "/api/v1/timelines/home", token: token))[0]?["media_attachments"]?[0]?["description"])
        }
        let alice = token(), bob = token(user: 1)
        #expect(try shown(to: alice) == "one")
        try media.setDescription(Array("two".utf8), ofPhoto: Int64(photo)!) // behind the API's back
        #expect(try shown(to: alice) == "one", "kept")
        try harness.send([("command", "login"), ("username", "bob"), ("password", "p")])
        try harness.send([("command", "follow"), ("IdUser", "2")])
        #expect(try shown(to: bob) == "two" && shown(to: alice) == "two", "a follow is a change")
        try media.setDescription(Array("three".utf8), ofPhoto: Int64(photo)!)
        #expect(try shown(to: alice) == "two" && shown(to: bob) == "two", "each viewer's page kept")
        harness.clock.advance(byMillis: Int64(harness.services.policy.streamCacheMillis))
        #expect(try shown(to: alice) == "three", "for stream_cache_ms at most")
        #expect(try ids(call(.get, "/api/v1/timelines/home", token: alice, [("max_id", photo)])) == [], "older pages are not the newest")
    }

    @Test func accountsHaveTheirCounts() throws {
        _ = try post("One")
        let alice = try json(call(.get, "/api/v1/accounts/verify_credentials", token: token()))
        #expect(string(alice["username"]) == "alice")
        #expect(alice["statuses_count"] == .number(Array("1".utf8)))
        #expect(string(alice["source"]?["privacy"]) == "public")
        #expect(string(try json(call(.get, "/api/v1/accounts/lookup", [("acct", "bob")]))["id"]) == "1")
        #expect(string(try json(call(.get, "/api/v1/accounts/lookup", [("acct", "@alice")]))["id"]) == "2")
        #expect(call(.get, "/api/v1/accounts/lookup", [("acct", "nobody")]).status == 404)
        // A name typed decomposed finds the account registered composed, as login does.
        try harness.send([("command", "register"), ("username", "Zo\u{00EB}"), ("password", "p")])
        #expect(string(try json(call(.get, "/api/v1/accounts/lookup", [("acct", "Zoe\u{0308}")]))["username"]) == "Zo\u{00EB}")
        #expect(string(try json(call(.get, "/api/v1/accounts/lookup", [("acct", "@bob@Example.COM")]))["id"]) == "1", "this site's host")
        #expect(call(.get, "/api/v1/accounts/lookup", [("acct", "bob@mastodon.social")]).status == 404, "not our bob")
        #expect(try json(call(.get, "/api/v2/search", [("q", "bob@mastodon.social")]))["accounts"]?.arrayCount == 0)
        #expect(string(try json(call(.get, "/api/v1/accounts/1"))["acct"]) == "bob")
        #expect(call(.get, "/api/v1/accounts/99").status == 404)
        let found = try json(call(.get, "/api/v2/search", [("q", "alice")]))
        #expect(found["accounts"]?.arrayCount == 1)
        #expect(found["statuses"]?.arrayCount == 1, "search finds photos by their author's name too")
        #expect(found["hashtags"] == .array([]))
    }

    /// A link to this site's photo, comment or person finds that one alone
    /// (apps open a tapped or pasted link so), as its `url` and `uri` give it.
    @Test func searchForAPagesLinkFindsWhatItShows() throws {
        let media = try #require(string(try json(call(.post, "/api/v1/media", token: token(), file: makeJPEG(width: 8, height: 8)))["id"]))
        let photo = try json(call(.post, "/api/v1/statuses", token: token(), [("status", "Sunset"), ("media_ids[]", media)]))
        let reply = try json(call(.post, "/api/v1/statuses", token: token(user: 1),
                                  [("status", "Nice sunset"), ("in_reply_to_id", try #require(string(photo["id"])))]))
        func found(_ query: String, _ fields: [(String, String)] = []) throws -> (accounts: [String], statuses: [String]) {
            let value = try json(call(.get, "/api/v2/search", [("q", query)] + fields))
            guard case .array(let accounts)? = value["accounts"], case .array(let statuses)? = value["statuses"] else { return ([], []) }
            return (accounts.compactMap { string($0["acct"]) }, statuses.compactMap { string($0["id"]) })
        }
        let photoID = try #require(string(photo["id"])), replyID = try #require(string(reply["id"]))
        #expect(try found(try #require(string(photo["url"]))) == ([], [photoID]))
        #expect(try found(try #require(string(reply["uri"]))) == ([], [replyID]), "the comment, not its photo")
        #expect(try found(try #require(string(reply["account"]?["url"]))) == (["bob"], []))
        #expect(try found(try #require(string(reply["account"]?["url"])), [("type", "statuses")]) == ([], []))
        #expect(try found(try #require(string(photo["url"])), [("type", "accounts")]) == ([], []))
        #expect(try found(try #require(string(reply["account"]?["url"])), [("type", "hashtags")]) == ([], []))
        #expect(try found(try #require(string(photo["url"])), [("offset", "1")]) == ([], []), "the first page only")
        #expect(try found("http://example.com/#/photo/\(photoID)/\(StatusID.comment(99).value)") == ([], []), "no such comment")
        #expect(try found("http://example.com/#/user/99") == ([], []), "no such person")
        #expect(try found("sunset").statuses == [photoID], "words are searched as before")
        _ = try json(call(.delete, "/api/v1/statuses/\(photoID)", token: token()))
        #expect(try found(try #require(string(photo["url"]))) == ([], []), "a deleted photo")
        #expect(try found(try #require(string(reply["uri"]))) == ([], []), "with its comments")
    }

    /// `offset` pages a search (Tusky's way, until a page is empty), past
    /// the search command's 100 a page too; the account only on the first.
    @Test func searchPagesByOffset() throws {
        for n in 1...130 { _ = try harness.photos.add(userID: 2, title: Array("sun \(n)".utf8), publish: { _ in }, unpublish: { _ in }) }
        func page(_ offset: Int, limit: Int = 40) throws -> [String] {
            let found = try json(call(.get, "/api/v2/search", [("q", "sun"), ("type", "statuses"), ("offset", String(offset)),
                                                                ("limit", String(limit))]))
            guard case .array(let statuses)? = found["statuses"] else { return [] }
            return statuses.compactMap { string($0["content"]) }
        }
        #expect(try page(0).first == "<p>sun 130</p>")
        #expect(try page(40).first == "<p>sun 90</p>")
        #expect(try page(120) == (1...10).reversed().map { "<p>sun \($0)</p>" }, "past the command's page of 100")
        #expect(try page(130).isEmpty, "the end")
        #expect(try page(5000).isEmpty)
        #expect(try json(call(.get, "/api/v2/search", [("q", "alice"), ("offset", "1")]))["accounts"]?.arrayCount == 0)
    }

    /// `account_id`: one person's statuses (an app's "search this account's posts").
    @Test func searchOfOneAccount() throws {
        for (user, title) in [(1, "sun by bob"), (2, "sun by alice")] {
            _ = try harness.photos.add(userID: Int64(user), title: Array(title.utf8), publish: { _ in }, unpublish: { _ in })
        }
        func contents(_ fields: [(String, String)]) throws -> [String] {
            guard case .array(let statuses)? = try json(call(.get, "/api/v2/search", [("q", "sun"), ("type", "statuses")] + fields))["statuses"]
            else { return [] }
            return statuses.compactMap { string($0["content"]) }
        }
        #expect(try contents([]) == ["<p>sun by alice</p>", "<p>sun by bob</p>"])
        #expect(try contents([("account_id", "1")]) == ["<p>sun by bob</p>"])
        #expect(try contents([("account_id", "9")]).isEmpty)
    }

    @Test func aMediasDescriptionIsEditableAndAnotherOnesIsNotFound() throws {
        let uploaded = try json(call(.post, "/api/v1/media", token: token(), file: makeJPEG(width: 64, height: 48)))
        let id = try #require(string(uploaded["id"]))
        let edited = try json(call(.put, "/api/v1/media/\(id)", token: token(), [("description", "A red and blue square"),
                                                                                 ("focus", "0.5,-0.5")]))
        #expect(string(edited["description"]) == "A red and blue square")
        #expect(call(.get, "/api/v1/media/\(id)", token: token(user: 1)).status == 404)
        #expect(call(.put, "/api/v1/media/\(id)", token: token(), [("focus", "2,0")]).status == 422)
        let posted = try json(call(.post, "/api/v1/statuses", token: token(), [("status", "Squares"), ("media_ids[]", id)]))
        let photo = try #require(string(posted["id"]))
        #expect(string(posted["media_attachments"]?[0]?["description"]) == "A red and blue square")
        let changed = try json(call(.put, "/api/v1/media/\(photo)", token: token(), [("description", "Two squares")]))
        #expect(string(changed["description"]) == "Two squares")
        #expect(string(try json(call(.get, "/api/v1/statuses/\(photo)"))["media_attachments"]?[0]?["description"]) == "Two squares")
        #expect(try json(call(.put, "/api/v1/media/\(photo)", token: token(), [("focus", "0,0")]))["description"] != .null,
                "kept when not sent")
        #expect(try json(call(.put, "/api/v1/media/\(photo)", token: token(), [("description", "")]))["description"] == .null,
                "removed when sent empty")
        let pending = try #require(string(try json(call(.post, "/api/v1/media", token: token(), [("description", "Small")],
                                                        file: makeJPEG(width: 8, height: 8)))["id"]))
        #expect(try json(call(.put, "/api/v1/media/\(pending)", token: token(), [("description", "")]))["description"] == .null)
    }
}

extension JSONValue {
    var arrayCount: Int? { if case .array(let items) = self { items.count } else { nil } }

    subscript(_ index: Int) -> JSONValue? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }
}
