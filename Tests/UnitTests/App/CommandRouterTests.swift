import Testing
@testable import IReporterKit

/// The router's own steps, with test-only commands: each is one type, and
/// one line registers it.
struct CommandRouterTests {
    /// Parameters from a dictionary: another carrier than form data, as a
    /// JSON body will be; the commands do not change for it.
    struct DictionaryParameters: RequestParameters {
        let values: [String: String]
        func field(_ name: String) -> [UInt8]? { values[name].map { Array($0.utf8) } }
        func file(_ name: String) -> UploadedFile? { nil }
    }

    struct Echo: Command {
        let descriptor = CommandDescriptor("echo", "Echo the text.", parameters: [CommandParameter("text", .text(maxBytes: nil), "")],
                                           failures: [.other], result: .successful)
        struct Input: CommandInput {
            let text: [UInt8]
            init(from parameters: any RequestParameters) { text = parameters.field("text") ?? [] }
        }
        struct Failure: APIFailure { var message: String { "Nothing to echo" } }
        struct Infrastructure: Error {}

        func run(_ input: Input, in context: CommandContext) throws -> RenderedJSON {
            if input.text.isEmpty { throw Failure() }
            if input.text == Array("disk".utf8) { throw Infrastructure() }
            var json = PHPJSONWriter()
            json.raw("{\"echo\":")
            json.string(input.text)
            json.raw("}")
            return RenderedJSON(json: json.bytes)
        }
    }

    struct WhoAmI: SignedInCommand {
        let descriptor = CommandDescriptor("whoami", "The signed-in user's id.", result: .successful)
        func run(_ input: NoInput, as user: SignedInUser, in context: CommandContext) -> RenderedJSON {
            RenderedJSON(json: Array("{\"IdUser\":\(user.id)}".utf8))
        }
    }

    func route(_ router: CommandRouter, _ values: [String: String], cookie: String? = nil) -> String {
        let context = CommandContext(sessionCookie: cookie.map { Array($0.utf8) })
        return String(decoding: router.route(DictionaryParameters(values: values), in: context).body, as: UTF8.self)
    }

    @Test func aCommandIsOneTypeAndOneLine() throws {
        let services = try AppServices.inMemory()
        var router = CommandRouter(sessions: services.sessions)
        router.register(Echo())
        #expect(route(router, ["command": "echo", "text": "hi \"there\""]) == #"{"echo":"hi \"there\""}"#)
        #expect(route(router, ["command": "echo"]) == #"{"error":"Nothing to echo"}"#, "its failure, in its own words")
        #expect(route(router, ["command": "echo", "text": "disk"])
                == #"{"error":"The service is temporarily unavailable, please try again"}"#, "any other error")
        #expect(route(router, ["command": "other"]) == "", "an unknown command: the original's empty answer")
        #expect(route(router, [:]) == "")
    }

    @Test func aSignedInCommandNeedsASession() throws {
        let services = try AppServices.inMemory()
        var router = CommandRouter(sessions: services.sessions)
        router.register(WhoAmI())
        #expect(route(router, ["command": "whoami"]) == #"{"error":"Authorization required"}"#)
        #expect(route(router, ["command": "whoami"], cookie: "../../etc/passwd") == #"{"error":"Authorization required"}"#)
        let session = try services.sessions.create([("IdUser", .string(Array("7".utf8)))], user: 7)
        #expect(route(router, ["command": "whoami"], cookie: session.id) == #"{"IdUser":7}"#)
        let anonymous = try services.sessions.create([("IdUser", .string(Array("0".utf8)))], user: 0)
        #expect(route(router, ["command": "whoami"], cookie: anonymous.id) == #"{"error":"Authorization required"}"#)
    }

    @Test func sessionChangesBecomeCookies() throws {
        let services = try AppServices.inMemory()
        let api = IReporterAPI(services: services)
        var form = FormData()
        form.setField(Array("command".utf8), Array("logout".utf8))
        let over = api.handle(APIRequest(parameters: form, sessionCookie: Array("abcdefghijklmnopqrstuvwxyz".utf8), isSecure: true))
        #expect(over.setCookie == ["PHPSESSID=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly; SameSite=Lax; Secure"])
    }
}
