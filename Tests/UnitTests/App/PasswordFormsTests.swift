import Testing
@testable import IReporterKit
import TestSupport

/// One typed password for every client (issue 24, 2), on the in-memory
/// stores: every client sends the app's value, SHA-1(typed + the app's
/// salt); the accounts the web client made while it sent the typed password
/// log in once with it beside the app's value (`legacy_password`) and are
/// upgraded, a typed attempt counting as one failure.
struct PasswordFormsTests {
    static let failed = #"{"error":"Authorization failed"}"#
    static let blocked = #"{"error":"Too many failed logins, try again in 1 seconds"}"#

    static func app(_ typed: String) -> String { String(decoding: AppPassword.derived(fromTyped: Array(typed.utf8)), as: UTF8.self) }
    static func signedIn(_ id: Int, _ name: String) -> String { #"{"result":[{"IdUser":"\#(id)","username":"\#(name)"}]}"# }

    func login(_ phone: AppHarness, _ name: String, _ typed: String) throws -> String {
        try phone.body([("command", "login"), ("username", name), ("password", Self.app(typed))])
    }

    /// What the web client sends after a refused login: the app's value and the typed password.
    func retry(_ phone: AppHarness, _ name: String, _ typed: String) throws -> String {
        try phone.body([("command", "login"), ("username", name), ("password", Self.app(typed)), ("legacy_password", typed)])
    }

    /// An account as the web client made it before issue 24: the typed password as `password`.
    func webMadeAccount(_ phone: AppHarness, _ name: String, _ typed: String) throws {
        try phone.send([("command", "register"), ("username", name), ("password", typed)])
        phone.cookie = nil
    }

    @Test func theAppsValueIsDerivedAsTheAppDerivesIt() {
        // Tests/EndToEnd/e2e.py's app_password("secret"), and Python's hashlib for a non-ASCII password.
        #expect(Self.app("secret") == "18c69224371c58c547b68bfa6d28dc8aeff006e4")
        #expect(Self.app("pässwörd 🔑") == "17987b09ed347af3dead339fea4f4ac72357d932")
        #expect(AppPassword.isDerived(Array("18C69224371C58C547B68BFA6D28DC8AEFF006E4".utf8), fromTyped: Array("secret".utf8)))
        #expect(!AppPassword.isDerived(Array("secret".utf8), fromTyped: Array("secret".utf8)))
    }

    @Test func aWebMadeAccountIsUpgradedByItsFirstLoginWithTheTypedPassword() throws {
        let phone = try AppHarness()
        try webMadeAccount(phone, "wendy", "Typed pw+1%")
        #expect(try login(phone, "wendy", "Typed pw+1%") == Self.failed, "its hash is of the typed password")
        #expect(try retry(phone, "wendy", "Typed pw+1%") == Self.signedIn(1, "wendy"))
        phone.cookie = nil
        // Upgraded: the app's value alone logs in, from any client; the typed password alone no longer does.
        #expect(try login(phone, "wendy", "Typed pw+1%") == Self.signedIn(1, "wendy"))
        #expect(try phone.body([("command", "login"), ("username", "wendy"), ("password", "Typed pw+1%")]) == Self.failed)
        #expect(try retry(phone, "wendy", "Typed pw+1%") == Self.signedIn(1, "wendy"), "a later retry still logs in")
    }

    /// From a review: a Mastodon app's password grant sent the app's value
    /// where the typed password goes. It matched as a web-made account's
    /// typed password, and the stored hash became that of the value's own
    /// value: the account's owner could no longer log in from the app.
    @Test func theAppsValueSentAsTheTypedPasswordLogsInAndChangesNothing() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "appy"), ("password", Self.app("secret"))])
        phone.cookie = nil
        for value in [Self.app("secret"), Self.app("secret").uppercased()] {
            #expect(try retry(phone, "appy", value) == Self.signedIn(1, "appy"), "\(value)")
            phone.cookie = nil
        }
        #expect(try login(phone, "appy", "secret") == Self.signedIn(1, "appy"), "the app's login still works")
    }

    /// From a review: `register` stores a name composed (NFC), and login
    /// compared the bytes sent: a keyboard sending `o` + U+0308 could not log
    /// in to the account it had just made with the same keystrokes.
    @Test func aNameTypedDecomposedLogsInToTheAccountItRegistered() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "Zoe\u{0308}"), ("password", Self.app("secret"))])
        phone.cookie = nil
        #expect(try login(phone, "Zoe\u{0308}", "secret") == Self.signedIn(1, #"Zo\u00eb"#))
        phone.cookie = nil
        #expect(try login(phone, "Zo\u{00EB}", "secret") == Self.signedIn(1, #"Zo\u00eb"#))
        phone.cookie = nil
        #expect(try login(phone, "Zoe\u{0308}", "wrong") == Self.failed)
    }

    /// From this stop's review: each spelling of a name (composed or not)
    /// had a throttle of its own, and a name of k accented letters 2^k.
    @Test func everySpellingOfANameIsOneAccountToTheThrottle() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "Zo\u{00EB}"), ("password", Self.app("secret"))])
        phone.cookie = nil
        for _ in 0..<5 { #expect(try login(phone, "Zoe\u{0308}", "wrong") == Self.failed) }
        #expect(try login(phone, "Zo\u{00EB}", "wrong") == Self.blocked, "the composed spelling is throttled too")
        #expect(try login(phone, "ZO\u{00EB}", "wrong") == Self.blocked, "and in other ASCII case, as the column compares")
    }

    @Test func anAccountMadeWithTheAppsValueLogsInFromEveryClient() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "appy"), ("password", Self.app("secret"))])
        phone.cookie = nil
        #expect(try login(phone, "appy", "secret") == Self.signedIn(1, "appy"))
        #expect(try retry(phone, "appy", "secret") == Self.signedIn(1, "appy"), "the web client's retry shape too")
        #expect(try retry(phone, "appy", "wrong") == Self.failed)
    }

    @Test func aTypedAttemptIsOneFailureItsRetryIncluded() throws {
        let phone = try AppHarness()
        try webMadeAccount(phone, "wendy", "right")
        // Four wrong typed attempts, each sent twice by the web client: four failures, not eight.
        for _ in 0..<4 {
            #expect(try login(phone, "wendy", "wrong") == Self.failed)
            #expect(try retry(phone, "wendy", "wrong") == Self.failed)
        }
        // The fifth, right: its first half is the fifth failure (a block), its second half is the same attempt.
        #expect(try login(phone, "wendy", "right") == Self.failed)
        #expect(try retry(phone, "wendy", "right") == Self.signedIn(1, "wendy"))
        phone.cookie = nil
        #expect(try login(phone, "wendy", "right") == Self.signedIn(1, "wendy"), "the success cleared the block")
    }

    @Test func aRetryCarriesNoSecondGuess() throws {
        let phone = try AppHarness()
        try webMadeAccount(phone, "wendy", "right")
        // A guesser sends a "retry" of another guess: an attempt of its own, counted.
        for index in 0..<2 {
            #expect(try login(phone, "wendy", "guess\(index)a") == Self.failed)
            #expect(try retry(phone, "wendy", "guess\(index)b") == Self.failed)
        }
        #expect(try login(phone, "wendy", "guess2a") == Self.failed)  // the fifth failure
        #expect(try retry(phone, "wendy", "guess2b") == Self.blocked)
        #expect(try retry(phone, "wendy", "guess2a") == Self.failed, "the fifth attempt's own second half")
        #expect(try retry(phone, "wendy", "guess2a") == Self.blocked, "once")
        // A typed password that is not the app value's: a plain login with the app's value, counted as ever.
        phone.clock.advance(bySeconds: 1)
        #expect(try phone.body([("command", "login"), ("username", "wendy"), ("password", Self.app("x")), ("legacy_password", "right")])
                == Self.failed)
        #expect(try retry(phone, "wendy", "right") == #"{"error":"Too many failed logins, try again in 2 seconds"}"#,
                "that was the sixth failure")
    }

    @Test func theWebClientsRegistrationIsTheApps() throws {
        let phone = try AppHarness()
        // The web client registers with the app's value: the app's own login works.
        try phone.send([("command", "register"), ("username", "newweb"), ("password", Self.app("typed"))])
        phone.cookie = nil
        #expect(try phone.body([("command", "login"), ("username", "newweb"), ("password", Self.app("typed").uppercased())])
                == Self.signedIn(1, "newweb"), "the app's value, in either case")
    }

    @Test func jsonRPCLoginTakesTheSameFields() throws {
        let phone = try AppHarness()
        try webMadeAccount(phone, "wendy", "right")
        let body = #"{"jsonrpc":"2.0","method":"login","params":{"username":"wendy","password":"\#(Self.app("right"))","legacy_password":"right"},"id":1}"#
        let answer = phone.api.handle(jsonRPC: Array(body.utf8),
                                      of: APIRequest(parameters: FormData(), sessionCookie: nil, clientAddress: phone.address, isCrossOrigin: false))
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"jsonrpc":"2.0","result":[{"IdUser":"1","username":"wendy"}],"id":1}"#)
        #expect(try login(phone, "wendy", "right") == Self.signedIn(1, "wendy"), "upgraded")
    }
}
