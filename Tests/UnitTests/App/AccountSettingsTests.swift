#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// `change_password`, `export` and `delete_account` on the in-memory stores.
struct AccountSettingsTests {
    let photo = makeJPEG(width: 64, height: 48)

    /// alice (1) with two sessions (the harness's cookie is the newest),
    /// and bob (2), signed in in another cookie jar.
    func twoPeople() throws -> (phone: AppHarness, aliceOther: [UInt8], bob: [UInt8]) {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "bob"), ("password", "b")])
        let bob = try #require(phone.cookie)
        phone.cookie = nil
        try phone.send([("command", "register"), ("username", "alice"), ("password", "old")])
        let other = try #require(phone.cookie)
        phone.cookie = nil
        try phone.send([("command", "login"), ("username", "alice"), ("password", "old")])
        return (phone, other, bob)
    }

    func signedIn(_ phone: AppHarness, _ cookie: [UInt8]) throws -> Bool {
        try phone.sessions.load(id: cookie) != nil
    }

    @Test func aNewPasswordEndsTheOtherSessionsOfTheAccountOnly() throws {
        let (phone, other, bob) = try twoPeople()
        let current = try #require(phone.cookie)
        #expect(try phone.body([("command", "change_password"), ("password", "wrong"), ("new_password", "new")])
                == #"{"error":"Wrong password"}"#)
        #expect(try phone.body([("command", "change_password"), ("password", "old"), ("new_password", "")])
                == #"{"error":"The new password cannot be stored"}"#)
        #expect(try signedIn(phone, other), "nothing changed yet")
        #expect(try phone.body([("command", "change_password"), ("password", "old"), ("new_password", "new%21")])
                == #"{"successful":1}"#)
        #expect(try phone.cookie == current && signedIn(phone, current), "the session that asked goes on")
        #expect(try !signedIn(phone, other), "the account's other session ended")
        #expect(try signedIn(phone, bob), "another account's did not")
        let stored = try #require(phone.users.accounts.first { $0.id == 2 }).password
        #expect(stored.starts(with: Array("$argon2id$".utf8)), "hashed as register hashes")
        phone.cookie = nil
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "old")]) == #"{"error":"Authorization failed"}"#)
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "new!")]).contains(#""IdUser":"2""#),
                "urldecoded once, as login decodes it")
        phone.cookie = nil
        #expect(try phone.body([("command", "change_password"), ("password", "new!"), ("new_password", "x")])
                == #"{"error":"Authorization required"}"#)
    }

    /// A session store where `change_password` lands between a login's
    /// password check and the session the login then makes (the race a
    /// review found: 2 logins in 12 with the old password kept a session).
    final class ChangedBeforeTheSession: SessionStore {
        let sessions: InMemorySessionStore
        var change: (() throws -> Void)?
        init(_ sessions: InMemorySessionStore) { self.sessions = sessions }
        func load(id: [UInt8]) throws -> Session? { try sessions.load(id: id) }
        func create(_ variables: [(String, PHPValue)], user: Int64) throws -> Session {
            try change?()
            change = nil
            return try sessions.create(variables, user: user)
        }
        func destroy(id: String) { sessions.destroy(id: id) }
        func endSessions(of user: Int64, except kept: String?) { sessions.endSessions(of: user, except: kept) }
        func sweep() -> Int { sessions.sweep() }
    }

    @Test func aLoginWhosePasswordWasChangedMeanwhileKeepsNoSession() throws {
        let (phone, _, _) = try twoPeople()
        let racing = ChangedBeforeTheSession(phone.sessions)
        var services = phone.services
        services.sessions = racing
        let api = IReporterAPI(services: services)
        func login(_ password: String) -> APIResponse {
            api.handle(APIRequest(parameters: CommandArguments(fields: ["command": Array("login".utf8), "username": Array("alice".utf8),
                                                                        "password": Array(password.utf8)])))
        }
        racing.change = {  // change_password's two steps: the new hash, then the sessions it finds end
            let alice = try #require(try phone.users.account(id: 2))
            #expect(try phone.users.replacePassword(userID: 2, old: alice.password, new: phone.services.hasher.hash(Array("new".utf8))))
            phone.sessions.endSessions(of: 2, except: nil)
        }
        let raced = login("old")
        #expect(String(decoding: raced.body, as: UTF8.self) == #"{"error":"Authorization failed"}"#)
        let alicesSessions = phone.sessions.sessions.values.filter { $0.contains { $0.0 == "IdUser" && $0.1 == .string(Array("2".utf8)) } }
        #expect(alicesSessions.isEmpty, "no session of alice's lives on")
        // A login that upgraded the same password meanwhile (its stored value changed, the password did not) goes through.
        racing.change = {
            let alice = try #require(try phone.users.account(id: 2))
            #expect(try phone.users.replacePassword(userID: 2, old: alice.password, new: phone.services.hasher.hash(Array("new".utf8))))
        }
        #expect(String(decoding: login("new").body, as: UTF8.self).hasPrefix(#"{"result":[{"IdUser":"2""#))
    }

    @Test func wrongCurrentPasswordsAreThrottledAsLogins() throws {
        let (phone, _, _) = try twoPeople()
        var answers: [String] = []
        for _ in 0..<12 {
            answers.append(try phone.body([("command", "change_password"), ("password", "guess"), ("new_password", "n")]))
        }
        #expect(answers.first == #"{"error":"Wrong password"}"#)
        #expect(answers.last?.hasPrefix(#"{"error":"Too many failed logins, try again in "#) == true, "\(answers)")
        let cookie = phone.cookie
        phone.cookie = nil
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "old")]).hasPrefix(#"{"error":"Too many failed"#),
                "the same account's throttle as login's")
        phone.cookie = cookie
        #expect(try phone.body([("command", "delete_account"), ("password", "old")]).hasPrefix(#"{"error":"Too many failed"#))
    }

    @Test func anAccountsDeletionTakesEverythingOfItsAndNothingElse() throws {
        let (phone, other, bob) = try twoPeople()
        try phone.send([("command", "upload"), ("title", "mine")], file: photo)          // 2
        try phone.send([("command", "upload"), ("title", "mine too")], file: photo)      // 3
        let alice = try #require(phone.cookie)
        phone.cookie = bob
        try phone.send([("command", "upload"), ("title", "bob's")], file: photo)         // 4
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "bob on alice's")])
        try phone.send([("command", "like"), ("IdPhoto", "2")])
        try phone.send([("command", "follow"), ("IdUser", "2")])
        phone.cookie = alice
        try phone.send([("command", "follow"), ("IdUser", "1")])
        try phone.send([("command", "comment"), ("IdPhoto", "4"), ("text", "alice on bob's")])
        try phone.send([("command", "dislike"), ("IdPhoto", "4")])
        try phone.send([("command", "like"), ("IdPhoto", "3")])

        #expect(try phone.body([("command", "delete_account"), ("password", "wrong")]) == #"{"error":"Wrong password"}"#)
        #expect(phone.photos.rows.count == 3, "nothing gone")
        let answer = try phone.send([("command", "delete_account"), ("password", "old")])
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"successful":1}"#)
        #expect(phone.cookie == nil, "logged out")
        #expect(try !signedIn(phone, alice) && !signedIn(phone, other))
        #expect(try signedIn(phone, bob))
        #expect(phone.users.accounts.map(\.username) == [Array("bob".utf8)])
        #expect(phone.photos.rows.map(\.id) == [4])
        #expect(Set(phone.files.photos.keys) == [4], "the photos' files went")
        #expect(phone.photos.commentRows.isEmpty, "bob's comment went with alice's photo, alice's on bob's photo went")
        #expect(phone.photos.votes.isEmpty)
        #expect(phone.follows.edges.isEmpty, "neither whom alice followed nor who followed her")
        #expect(phone.notifications.rows.isEmpty, "neither those told to alice nor those her like, follow and comment told bob")
        phone.cookie = bob
        #expect(try phone.body([("command", "stream"), ("extras", "likes,dislikes,comments")]).contains(
            #""IdPhoto":"4","title":"bob's","IdUser":"1","username":"bob","likes":"0","dislikes":"0","comments":"0""#),
            "bob's photo's counts follow")
        phone.cookie = nil
        #expect(try phone.body([("command", "login"), ("username", "alice"), ("password", "old")]) == #"{"error":"Authorization failed"}"#)
        #expect(try phone.body([("command", "register"), ("username", "alice"), ("password", "p")]).contains(#""username":"alice""#),
                "the name is free again")
    }

    /// A comment or a like whose request signed in before the account was
    /// deleted (a JSON-RPC batch's later calls, a request in flight) stored
    /// rows and notifications owned by no one (a review's finding): now
    /// refused as the session they came with is.
    @Test func aCommentOrVoteLandingAfterTheAccountsDeletionStoresNothing() throws {
        let (phone, _, bob) = try twoPeople()
        phone.cookie = bob
        try phone.send([("command", "upload"), ("title", "bob's")], file: photo)
        phone.cookie = nil
        let alice = try #require(phone.users.accounts.first { $0.username == Array("alice".utf8) })
        try AccountRemoval(phone.services).remove(alice.id)
        let bobsPhoto = try #require(phone.photos.rows.first?.id)
        for fields in [["command": "comment", "IdPhoto": "\(bobsPhoto)", "text": "too late"], ["command": "like", "IdPhoto": "\(bobsPhoto)"]] {
            // The session the request came with, loaded before the deletion.
            let answer = phone.api.handle(APIRequest(parameters: CommandArguments(fields: fields.mapValues { Array($0.utf8) }),
                                                     session: RequestSession(signedIn: SignedInUser(token: alice.id))))
            #expect(String(decoding: answer.body, as: UTF8.self) == #"{"error":"Authorization required"}"#, "\(fields)")
        }
        #expect(phone.photos.commentRows.isEmpty && phone.photos.votes.isEmpty)
        #expect(phone.notifications.rows.isEmpty, "no notification told bob of a deleted account")
    }

    @Test func theExportIsAZipOfTheOriginalsAndAJSONOfWhatThePersonGave() throws {
        let (phone, _, bob) = try twoPeople()
        try phone.send([("command", "upload"), ("title", "Sunset é")], file: photo)      // 2
        let alice = try #require(phone.cookie)
        phone.cookie = bob
        try phone.send([("command", "upload"), ("title", "bob's")], file: photo)         // 3
        phone.cookie = alice
        try phone.send([("command", "comment"), ("IdPhoto", "3"), ("text", "nice\nshot")])
        try phone.send([("command", "dislike"), ("IdPhoto", "3")])
        try phone.send([("command", "like"), ("IdPhoto", "2")])
        // A PHP-era title its MySQL cut inside its last character (no file here).
        _ = try phone.photos.add(userID: 2, title: Array(Array("Crème ☕".utf8).dropLast(1)), publish: { _ in }, unpublish: { _ in }) // 4

        let answer = try phone.send([("command", "export")])
        #expect(answer.contentType == "application/zip")
        let file = try #require(answer.file)
        #expect(file.downloadName == "ireporter-2.zip")
        var zip: [UInt8] = []
        #expect(file.send(chunkSize: 1000) { zip += $0; return true })
        #expect(zip.count == file.size)
        #expect(phone.files.spoolFiles.isEmpty, "its spool file is removed once answered (the descriptor keeps the data)")
        let path = phone.scratch.write("export.zip", zip)
        let stored = try #require(phone.files.photos[2]).photo
        let original = phone.scratch.write("original.jpg", stored)
        #expect(try python("""
            import json, sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            assert z.namelist() == ["photos/2.jpg", "ireporter.json"], z.namelist()
            assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
            assert z.read("photos/2.jpg") == open(sys.argv[2], "rb").read()
            data = json.loads(z.read("ireporter.json"))
            assert data["account"] == {"IdUser": "2", "username": "alice", "registered": sys.argv[3]}, data
            photos = sorted((p["IdPhoto"], p["title"], p["file"]) for p in data["photos"])
            assert photos == [("2", "Sunset é", "photos/2.jpg"), ("4", "Crème ", None)], data
            assert [(c["IdPhoto"], c["text"]) for c in data["comments"]] == [("3", "nice\\nshot")], data
            assert data["votes"] == [{"IdPhoto": "2", "vote": "1"}, {"IdPhoto": "3", "vote": "-1"}], data
            """, path, original, String(try #require(phone.users.registered[2]))))
        #expect(answer.body.isEmpty)
    }

    @Test func theExportIsNoJSONRPCMethodAndNeedsASession() throws {
        let phone = try AppHarness()
        #expect(try phone.body([("command", "export")]) == #"{"error":"Authorization required"}"#)
        let rpc = phone.api.handle(jsonRPC: Array(#"{"jsonrpc":"2.0","method":"export","id":1}"#.utf8), of: APIRequest(parameters: FormData()))
        #expect(String(decoding: rpc.body, as: UTF8.self)
                == #"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":"export answers a file: send it as a form to \/iReporter\/"},"id":1}"#)
    }

    @Test func crc32AndZip64() throws {
        var crc = CRC32()
        crc.update(Array("123456789".utf8))
        #expect(crc.value == 0xCBF4_3926, "the check value of CRC-32/ISO-HDLC")
        let scratch = ScratchDirectory("zip")
        for (limit32, limit16) in [(UInt64(0xFFFF_FFFF), 0xFFFF), (UInt64(40), 2)] {
            let path = "\(scratch.path)/\(limit16).zip"
            let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            var zip = ZipWriter(fd: fd, path: path, modified: 1_700_000_000, limit32: limit32, limit16: limit16)
            try zip.add("a.txt", Array("first".utf8))
            try zip.add("b/ü.txt", Array(repeating: 7, count: 100))
            try zip.add("c.txt", [])
            _ = try zip.finish()
            close(fd)
            #expect(try python("""
                import sys, zipfile
                z = zipfile.ZipFile(sys.argv[1])
                assert z.testzip() is None
                assert [(i.filename, i.file_size, i.date_time) for i in z.infolist()] == [
                    ("a.txt", 5, (2023, 11, 14, 22, 13, 20)), ("b/ü.txt", 100, (2023, 11, 14, 22, 13, 20)),
                    ("c.txt", 0, (2023, 11, 14, 22, 13, 20))], z.infolist()
                assert z.read("a.txt") == b"first" and z.read("b/ü.txt") == bytes([7]) * 100
                """, path), "limits \(limit32), \(limit16): Zip64 records past them")
        }
    }

    /// Python's zipfile, an independent reader, runs `script` on `arguments`.
    func python(_ script: String, _ arguments: String...) throws -> Bool {
        try SpawnedProgram(["python3", "-c", script] + arguments).exitStatus() == 0
    }

    /// Every door of the account closes before its photos go: an app's
    /// token could otherwise post a photo meanwhile that outlives the account.
    @Test func anAccountsTokensEndBeforeItsPhotosGo() throws {
        let parts = AccountRemoval(try AppHarness().services).parts
        let tokens = try #require(parts.firstIndex { $0 is TokensOfAccount })
        let photos = try #require(parts.firstIndex { $0 is PhotosOfAccount })
        #expect(tokens < photos)
    }

    /// Each export reads every photo and walks tables without an index by
    /// author: `export_rate_limit` an hour.
    @Test func exportsAreLimitedPerHour() throws {
        var policy = AppHarness.cheapPolicy
        policy.exportRateLimit = 2
        let phone = try AppHarness(policy: policy)
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        for _ in 0..<2 { #expect(try phone.send([("command", "export")]).contentType == "application/zip") }
        #expect(try phone.body([("command", "export")]) == #"{"error":"Too many exports, please try again later"}"#)
        phone.clock.advance(bySeconds: 3600)
        #expect(try phone.send([("command", "export")]).contentType == "application/zip", "a new hour")
    }

    /// An upload that passed its sign-in before the deletion began and
    /// commits after the account's photos went is removed once the account's
    /// row is gone; one after that stores nothing.
    @Test func aPhotoCommittedWhileItsAccountWasDeletedGoesToo() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        let meanwhile = PhotoStoreMeanwhile(phone.photos)
        var late: Int64?
        meanwhile.afterReadingPhotoIDs = { _ in
            if late == nil { late = try phone.photos.add(userID: 1, title: Array("late".utf8), publish: { _ in }, unpublish: { _ in }) }
        }
        var services = phone.services
        services.photos = meanwhile
        try AccountRemoval(services).remove(1)
        #expect(late != nil)
        #expect(phone.photos.rows.isEmpty, "the late photo went with its account")
        #expect(throws: PhotoStoreError.accountRemoved) {
            try phone.photos.add(userID: 1, title: Array("later".utf8), publish: { _ in }, unpublish: { _ in })
        }
    }
}
