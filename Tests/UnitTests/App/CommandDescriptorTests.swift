import Testing
@testable import IReporterKit

/// The descriptor: its parameters' one parser, and everything derived from
/// it (the router, JSON-RPC, rpc.discover, the cross-site rule, API.md).
struct CommandDescriptorTests {
    typealias Parameters = CommandRouterTests.DictionaryParameters

    func failure(_ read: () throws -> Any?) -> String? {
        do {
            _ = try read()
            return nil
        } catch let failure as any APIFailure {
            return "\(failure.kind.code) \(failure.message)"
        } catch {
            return "\(error)"
        }
    }

    @Test func numbersArePlainDecimalsInRange() throws {
        let count = CommandParameter("count", .integer(1...100), "")
        func read(_ value: String?) throws -> Int64? { try count.integer(Parameters(values: value.map { ["count": $0] } ?? [:])) }
        #expect(try read(nil) == nil)
        #expect(try read("") == nil, "empty counts as absent")
        #expect(try read("1") == 1 && read("100") == 100 && read("007") == 7)
        for bad in ["0", "101", "-1", "+5", " 5", "5 ", "5x", "0x10", "1e2", "99999999999999999999", "١٢"] {
            #expect(failure { try read(bad) } == "-32602 Invalid count: a whole number from 1 to 100 is expected", "\(bad)")
        }
        let id = CommandParameter.id("IdPhoto", "")
        #expect(failure { try id.requiredInteger(Parameters(values: [:])) } == "-32602 Missing IdPhoto")
        #expect(failure { try id.requiredInteger(Parameters(values: ["IdPhoto": "0"])) }
                == "-32602 Invalid IdPhoto: a whole number from 1 is expected")
        #expect(try id.requiredInteger(Parameters(values: ["IdPhoto": "9223372036854775807"])) == .max)
        #expect(failure { try id.requiredInteger(Parameters(values: ["IdPhoto": "9223372036854775808"])) } != nil, "over Int64")
    }

    @Test func aCommandsOwnFailureAnswersItsBadValues() throws {
        let count = CommandParameter("count", .integer(1...100), "", invalid: SearchCommand.Failure.badCount)
        #expect(failure { try count.integer(Parameters(values: ["count": "0"])) } == "-32602 count must be a number from 1 to 100")
        let text = CommandParameter("q", .text(maxBytes: 3), "", invalid: SearchCommand.Failure.queryTooLong)
        #expect(try text.text(Parameters(values: ["q": "abc"])) == Array("abc".utf8))
        #expect(failure { try text.text(Parameters(values: ["q": "abcd"])) } == "-32602 Search text is too long (at most 200 bytes)")
        #expect(try text.text(Parameters(values: [:])) == [])
    }

    @Test func wordsAndListsAreTheEnumerationsCases() throws {
        let effect = CommandParameter.effect(required: false)
        #expect(try effect.choice(Parameters(values: ["effect": "noir"])) == PhotoEffect.noir)
        #expect(try effect.choice(Parameters(values: ["effect": ""])) as PhotoEffect? == nil)
        #expect(failure { try effect.choice(Parameters(values: ["effect": "Noir"])) as PhotoEffect? }
                == "-32602 Unknown effect: the effects command lists them")
        let extras = CommandParameter.extras()
        #expect(try extras.list(Parameters(values: ["extras": "myvote,likes,likes"])) == [StreamExtra.likes, .myvote],
                "each once, in rendering order")
        #expect(try extras.list(Parameters(values: [:])) as [StreamExtra] == [])
        for bad in ["likes,", ",likes", "likes,password", "LIKES"] {
            #expect(failure { try extras.list(Parameters(values: ["extras": bad])) as [StreamExtra] }?.hasPrefix("-32602 Invalid extras") == true,
                    "\(bad)")
        }
    }

    /// A test-only command: one type with its descriptor, one line to register it.
    struct Shout: Command {
        static let word = CommandParameter("word", .text(maxBytes: 8), required: true, "what to shout",
                                           invalid: ParameterRules.InvalidValue(name: "word"))
        let descriptor = CommandDescriptor("shout", "The word in capitals.", parameters: [Shout.word], readOnly: true,
                                           result: .effects)
        struct Input: CommandInput {
            let word: [UInt8]
            init(from parameters: any RequestParameters) throws { word = try Shout.word.text(parameters) }
        }
        func run(_ input: Input, in context: CommandContext) -> RenderedJSON {
            RenderedJSON(json: Array("{\"result\":\"".utf8) + input.word.map { $0 >= 97 && $0 <= 122 ? $0 - 32 : $0 }
                         + Array("\"}".utf8))
        }
    }

    @Test func oneDescriptorGivesTheRouteTheMethodItsDocumentAndTheCrossSiteRule() throws {
        let services = try AppServices.inMemory()
        var router = CommandRouter(sessions: services.sessions)
        router.register(Shout())
        let form = router.route(Parameters(values: ["command": "shout", "word": "hey"]), in: CommandContext())
        #expect(String(decoding: form.body, as: UTF8.self) == #"{"result":"HEY"}"#)

        let rpc = JSONRPCService(router: router)
        func call(_ body: String, crossOrigin: Bool = false) -> String {
            let answer = rpc.answer(Array(body.utf8), sessionCookie: nil, context: { _ in CommandContext(isCrossOrigin: crossOrigin) },
                                    finished: { _ in }).body
            return String(decoding: answer ?? [], as: UTF8.self)
        }
        #expect(call(#"{"jsonrpc":"2.0","method":"shout","params":{"word":"hey"},"id":1}"#) == #"{"jsonrpc":"2.0","result":"HEY","id":1}"#)
        #expect(call(#"{"jsonrpc":"2.0","method":"shout","params":{"word":"hey"},"id":1}"#, crossOrigin: true).contains(#""result":"HEY""#),
                "read-only: allowed from another web site")
        #expect(call(#"{"jsonrpc":"2.0","method":"shout","params":{"word":"too long a word"},"id":1}"#)
                == #"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid word"},"id":1}"#)

        let document = try JSONParser.parse(Array(call(#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#).utf8))
        func first(_ value: JSONValue?) -> JSONValue? {
            guard case .array(let items)? = value else { return nil }
            return items.first
        }
        let method = try #require(first(document["result"]?["methods"]))
        #expect(method["name"] == .string(Array("shout".utf8)))
        #expect(first(method["params"])?["schema"] == (try JSONParser.parse(Array(#"{"type":"string","maxLength":8}"#.utf8))))
        #expect(first(method["params"])?["required"] == .bool(true))
        #expect(method["errors"] == (try JSONParser.parse(Array(
            ##"[{"$ref":"#/components/errors/invalid-parameters"},{"$ref":"#/components/errors/unavailable"}]"##.utf8))))
    }

    @Test func aCommandThatChangesSomethingIsRefusedFromOtherSites() throws {
        var descriptor = Shout().descriptor
        descriptor.readOnly = false
        struct Changing: Command {
            let descriptor: CommandDescriptor
            func run(_ input: Shout.Input, in context: CommandContext) -> RenderedJSON { Shout().run(input, in: context) }
        }
        let services = try AppServices.inMemory()
        var router = CommandRouter(sessions: services.sessions)
        router.register(Changing(descriptor: descriptor))
        let refused = router.route(Parameters(values: ["command": "shout", "word": "hey"]), in: CommandContext(isCrossOrigin: true))
        #expect(String(decoding: refused.body, as: UTF8.self) == #"{"error":"Requests from other web sites are not allowed"}"#)
    }

    @Test func theServicesCommandsAreDescribedTruly() throws {
        let api = IReporterAPI(services: try AppServices.inMemory())
        let commands = Dictionary(uniqueKeysWithValues: api.router.descriptors.map { ($0.name, $0) })
        #expect(commands.count == 33)
        #expect(commands.keys.allSatisfy { $0.utf8.count <= APIResponder.loggedCommandBytes }, "logged and counted by their whole name")
        #expect(Set(commands.values.filter(\.readOnly).map(\.name))
                == ["stream", "comments", "effects", "search", "followers", "following", "familiar_followers", "person", "feed", "liked",
                    "notifications", "notification_channel", "authorized_apps", "markers"])
        #expect(Set(commands.values.filter(\.signIn).map(\.name))
                == ["upload", "comment", "uncomment", "like", "dislike", "unvote", "delete", "preview", "follow", "unfollow", "feed",
                    "familiar_followers", "liked", "notifications", "dismiss", "notification_channel", "authorized_apps", "revoke_app", "change_password", "export",
                    "delete_account", "markers", "mark"])
        #expect(Set(commands.values.filter { !$0.isJSONRPCMethod }.map(\.name)) == ["upload", "preview", "export"])
        let preview = try #require(commands["preview"])
        #expect(preview.errors.map(\.code) == [-32602, -32000, -32001, -32003, -32004, -32005], "busy and the rate limit included")
        #expect(commands["search"]?.errors.map(\.code) == [-32602, -32000, -32005])
        for limit in commands.values.compactMap(\.rateLimit) {
            #expect(Configuration.settings.contains { $0.key == limit.setting }, "\(limit.setting) is a setting")
        }
    }

    @Test func searchIsAMethodReadableFromOtherSitesWithParameterErrors() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        _ = try phone.photos.add(userID: 1, title: Array("sunset".utf8), publish: { _ in }, unpublish: { _ in })
        func rpc(_ body: String, crossOrigin: Bool = false) -> String {
            String(decoding: phone.api.handle(jsonRPC: Array(body.utf8), of: APIRequest(parameters: FormData(), isCrossOrigin: crossOrigin)).body,
                   as: UTF8.self)
        }
        #expect(rpc(#"{"jsonrpc":"2.0","method":"search","params":{"q":"sun","count":0},"id":1}"#)
                == #"{"jsonrpc":"2.0","error":{"code":-32602,"message":"count must be a number from 1 to 100"},"id":1}"#,
                "as stream's count")
        #expect(rpc(#"{"jsonrpc":"2.0","method":"search","params":{"q":"sun"},"id":1}"#, crossOrigin: true).contains(#""title":"sunset""#))
        #expect(rpc(#"{"jsonrpc":"2.0","method":"search","params":{"q":"sun","count":""},"id":1}"#).contains(#""title":"sunset""#),
                "an empty count is absent, as everywhere")
    }

    @Test func apiMDsTablesAreMadeFromTheDescriptors() throws {
        var root = #filePath
        for _ in 0..<4 { root = String(root[..<root.lastIndex(of: "/")!]) }
        let docs = String(decoding: try #require(readFile("\(root)/docs/API.md")), as: UTF8.self)
        let lines = docs.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("| command | signed in |") })
        let first = lines[start...].prefix { $0.hasPrefix("|") }
        let second = lines[(first.endIndex + 1)...].prefix { $0.hasPrefix("|") }
        let table = first.map { $0 + "\n" }.joined() + "\n" + second.map { $0 + "\n" }.joined()
        let expected = CommandDescriptor.referenceTables(IReporterAPI(services: try AppServices.inMemory()).router.descriptors)
        #expect(table == expected, "docs/API.md's tables differ from the commands' descriptors; replace them with:\n\(expected)")
        let cells = IReporterAPI(services: try AppServices.inMemory()).router.descriptors.flatMap { [$0.summary] + $0.parameters.map(\.summary) }
        #expect(cells.allSatisfy { !$0.contains("|") }, "a | would split a table cell")
    }
}
