import Testing
@testable import IReporterKit
import TestSupport

/// JSON-RPC 2.0 at /iReporter/rpc on the in-memory stores: the
/// specification's own examples (jsonrpc.org/specification, section 7),
/// then the service's methods, sessions, limits and errors.
struct JSONRPCTests {
    func rpc(_ phone: AppHarness, _ body: String, crossOrigin: Bool = false) -> APIResponse {
        let response = phone.api.handle(jsonRPC: Array(body.utf8),
                                        of: APIRequest(parameters: FormData(), sessionCookie: phone.cookie,
                                                       clientAddress: phone.address, isCrossOrigin: crossOrigin))
        for header in response.setCookie {
            let value = header.split(separator: ";")[0].dropFirst("PHPSESSID=".count)
            phone.cookie = value == "deleted" ? nil : Array(value.utf8)
        }
        return response
    }

    /// The answer as JSON, with every error's `data` (our detail) left out,
    /// to compare with the specification's examples.
    func answer(_ phone: AppHarness, _ body: String) throws -> JSONValue? {
        let response = rpc(phone, body)
        #expect(response.contentType == "application/json")
        if response.body.isEmpty {
            #expect(response.status == 204)
            return nil
        }
        return withoutData(try JSONParser.parse(response.body))
    }

    func withoutData(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array(let items): .array(items.map(withoutData))
        case .object(let members): .object(members.filter { $0.0 != "data" }.map { ($0.0, withoutData($0.1)) })
        default: value
        }
    }

    func json(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    /// From a client developer's review: a body after a byte order mark was
    /// a parse error, and a count of `10.0` or `1e1` was refused.
    @Test func aByteOrderMarkAndWholeNumbersSpelledOtherwiseAreTaken() throws {
        let phone = try AppHarness()
        let withMark = [0xEF, 0xBB, 0xBF] + Array(#"{"jsonrpc":"2.0","method":"effects","id":1}"#.utf8)
        let answer = phone.api.handle(jsonRPC: withMark, of: APIRequest(parameters: FormData()))
        #expect(String(decoding: answer.body, as: UTF8.self).hasPrefix(#"{"jsonrpc":"2.0","result":["#))
        for count in ["10.0", "1e1", "1E+1"] {
            let body = #"{"jsonrpc":"2.0","method":"stream","params":{"count":\#(count)},"id":1}"#
            #expect(String(decoding: rpc(phone, body).body, as: UTF8.self) == #"{"jsonrpc":"2.0","result":[],"id":1}"#, "\(count)")
        }
        #expect(String(decoding: rpc(phone, #"{"jsonrpc":"2.0","method":"stream","params":{"count":2.5},"id":1}"#).body, as: UTF8.self)
                .contains("-32602"), "a fraction is no count")
        for (number, whole) in [("1e300", nil), ("-2.0", "-2"), ("12", nil), ("0.0", "0"), ("1.5e1", "15"), ("150e-1", "15"),
                                ("149.00000000000001", nil), ("9007199254740993.0", "9007199254740993"), ("1.0000000000000001", nil),
                                ("99999999999999999999.0", nil), ("2.50", nil)] {
            #expect(JSONParameters.integral(Array(number.utf8)).map { String(decoding: $0, as: UTF8.self) } == whole, "\(number)")
        }
    }

    @Test func theSpecificationsErrorExamples() throws {
        let phone = try AppHarness()
        let examples: [(String, String?)] = [
            (#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#,
             #"{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}"#),
            (#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#,
             #"{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}"#),
            (#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#,
             #"{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}"#),
            (#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]"#,
             #"{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}"#),
            ("[]", #"{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}"#),
            ("[1]", #"[{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}]"#),
            ("[1,2,3]", #"""
                [{"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
                 {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null},
                 {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}]
                """#),
            (#"""
                [{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
                 {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]
                """#, nil),
        ]
        for (request, expected) in examples {
            #expect(try answer(phone, request) == expected.map(json), "\(request)")
        }
    }

    @Test func theSpecificationsExamplesWithOurMethods() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        try phone.send([("command", "upload"), ("title", "one")], file: makeJPEG(width: 32, height: 32))
        let one = #"[{"IdPhoto":"2","title":"one","IdUser":"1","username":"alice"}]"#
        // "rpc call with named parameters"
        #expect(try answer(phone, #"{"jsonrpc": "2.0", "method": "stream", "params": {"IdPhoto": 2}, "id": 3}"#)
                == json(#"{"jsonrpc":"2.0","result":\#(one),"id":3}"#))
        // "a Notification"
        #expect(try answer(phone, #"{"jsonrpc": "2.0", "method": "like", "params": {"IdPhoto": 2}}"#) == nil)
        #expect(phone.photos.votes.count == 1, "a notification runs, unanswered")
        // "rpc call Batch" (mixed: calls, a notification, an invalid object, an unknown method)
        #expect(try answer(phone, #"""
            [{"jsonrpc": "2.0", "method": "stream", "params": {"IdPhoto": "2"}, "id": "1"},
             {"jsonrpc": "2.0", "method": "unvote", "params": {"IdPhoto": 2}},
             {"jsonrpc": "2.0", "method": "comments", "params": {"IdPhoto": 2}, "id": "2"},
             {"foo": "boo"},
             {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
             {"jsonrpc": "2.0", "method": "effects", "id": "9"}]
            """#) == json(#"""
            [{"jsonrpc":"2.0","result":\#(one),"id":"1"},
             {"jsonrpc":"2.0","result":[],"id":"2"},
             {"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null},
             {"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"5"},
             {"jsonrpc":"2.0","result":\#(String(decoding: EffectList(effects: PhotoEffect.allCases).json.dropFirst(10).dropLast(), as: UTF8.self)),"id":"9"}]
            """#))
        #expect(phone.photos.votes.isEmpty)
    }

    /// From a review: `{"count": 5, "snice": 2}` answered the whole stream,
    /// the misspelled `since` taken as absent. A name the method does not
    /// declare is refused, and the call does nothing.
    @Test func aParameterTheMethodDoesNotDeclareIsRefused() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        try phone.send([("command", "upload"), ("title", "one")], file: makeJPEG(width: 32, height: 32))
        let misspelled = #"{"jsonrpc":"2.0","method":"stream","params":{"count":5,"snice":2},"id":1}"#
        #expect(String(decoding: rpc(phone, misspelled).body, as: UTF8.self)
                == #"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":"stream has no parameter snice"},"id":1}"#)
        _ = rpc(phone, #"{"jsonrpc":"2.0","method":"like","params":{"IdPhoto":2,"IdPhto":2},"id":2}"#)
        #expect(phone.photos.votes.isEmpty, "a refused call does nothing")
        // Every declared name is taken, the web client's `legacy_password` too.
        let login = #"{"jsonrpc":"2.0","method":"login","params":{"username":"alice","password":"p","legacy_password":""},"id":3}"#
        #expect(String(decoding: rpc(phone, login).body, as: UTF8.self).contains(#""result""#))
    }

    /// From an attacker's review: 20 right logins in one batch were 20
    /// Argon2id hashes for one request, counted by no throttle. A body
    /// checks one password; the calls after it that would are refused.
    @Test func aBatchChecksOnePassword() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        let login = #"{"jsonrpc":"2.0","method":"login","params":{"username":"alice","password":"p"},"id":"#
        let change = #"{"jsonrpc":"2.0","method":"change_password","params":{"password":"p","new_password":"q"},"id":3}"#
        let answered = try #require(try answer(phone, "[\(login)1},\(login)2},\(change)]"))
        #expect(try answered == json(#"""
            [{"jsonrpc":"2.0","result":[{"IdUser":"1","username":"alice"}],"id":1},
             {"jsonrpc":"2.0","error":{"code":-32004,"message":"A batch may check one password: send each login, registration or password change on its own"},"id":2},
             {"jsonrpc":"2.0","error":{"code":-32004,"message":"A batch may check one password: send each login, registration or password change on its own"},"id":3}]
            """#))
        // One a request: the next body may log in again, and other calls beside it run.
        let stream = #"{"jsonrpc":"2.0","method":"stream","id":5}"#
        #expect(try answer(phone, "[\(login)4},\(stream)]") == json(#"""
            [{"jsonrpc":"2.0","result":[{"IdUser":"1","username":"alice"}],"id":4},{"jsonrpc":"2.0","result":[],"id":5}]
            """#))
    }

    @Test func idsAreEchoedAsSent() throws {
        let phone = try AppHarness()
        for id in ["123456789012345678901234567890", "-0.5e-3", #""\u00e9 \"x\"""#, "null"] {
            let body = String(decoding: rpc(phone, #"{"jsonrpc":"2.0","method":"effects","id":\#(id)}"#).body, as: UTF8.self)
            #expect(body.hasSuffix(#","id":\#(id == #""\u00e9 \"x\"""# ? #""\u00e9 \"x\"""# : id)}"#), "\(body)")
        }
        #expect(String(decoding: rpc(phone, #"{"jsonrpc":"2.0","method":"effects","id":{"a":1}}"#).body, as: UTF8.self)
                .contains(#""code":-32600"#), "an object is no id")
    }

    @Test func aBatchKeepsItsSessionAndSetsTheCookie() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        _ = try phone.photos.add(userID: 1, title: Array("t".utf8), publish: { _ in }, unpublish: { _ in })
        phone.cookie = nil
        let body = try answer(phone, #"""
            [{"jsonrpc":"2.0","method":"like","params":{"IdPhoto":2},"id":1},
             {"jsonrpc":"2.0","method":"login","params":{"username":"alice","password":"p"},"id":2},
             {"jsonrpc":"2.0","method":"like","params":{"IdPhoto":2},"id":3},
             {"jsonrpc":"2.0","method":"like","params":{"IdPhoto":"x"},"id":4},
             {"jsonrpc":"2.0","method":"like","params":[2],"id":5},
             {"jsonrpc":"2.0","method":"like","params":{"IdPhoto":[2]},"id":6},
             {"jsonrpc":"2.0","method":"upload","params":{"title":"t"},"id":7},
             {"jsonrpc":"2.0","method":"delete","params":{"IdPhoto":9},"id":8}]
            """#)
        #expect(try body == json(#"""
            [{"jsonrpc":"2.0","error":{"code":-32001,"message":"Authorization required"},"id":1},
             {"jsonrpc":"2.0","result":[{"IdUser":"1","username":"alice"}],"id":2},
             {"jsonrpc":"2.0","result":[{"IdPhoto":"2","likes":"1","dislikes":"0","comments":"0","myvote":"1"}],"id":3},
             {"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid IdPhoto: a whole number from 1 is expected"},"id":4},
             {"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":5},
             {"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":6},
             {"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":7},
             {"jsonrpc":"2.0","error":{"code":-32002,"message":"No such photo"},"id":8}]
            """#))
        #expect(phone.cookie != nil, "the login's cookie")
        #expect(try answer(phone, #"{"jsonrpc":"2.0","method":"logout","id":1}"#) == json(#"{"jsonrpc":"2.0","result":null,"id":1}"#))
        #expect(phone.cookie == nil)
    }

    @Test func aBatchsSinglePhotoCallsAnswerAsAloneInOrder() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        for title in ["a", "b", "c"] {
            _ = try phone.photos.add(userID: 1, title: Array(title.utf8), publish: { _ in }, unpublish: { _ in }) // 2, 3, 4
        }
        func stream(_ params: String, id: Int) -> String { #"{"jsonrpc":"2.0","method":"stream","params":\#(params),"id":\#(id)}"# }
        let reads = [stream(#"{"IdPhoto":3}"#, id: 1), stream(#"{"IdPhoto":"99"}"#, id: 2), stream(#"{"IdPhoto":2}"#, id: 3),
                     stream(#"{"IdPhoto":3}"#, id: 4), stream(#"{"IdPhoto":"x"}"#, id: 5), stream(#"{"IdPhoto":2,"count":0}"#, id: 6),
                     stream(#"{"IdPhoto":2,"extras":"likes"}"#, id: 7), #"{"jsonrpc":"2.0","method":"stream","params":{"IdPhoto":4}}"#]
        let alone = reads.map { String(decoding: rpc(phone, $0).body, as: UTF8.self) }.filter { !$0.isEmpty }
        #expect(alone.count == 7 && alone[0].contains(#""title":"b""#) && alone[1] == #"{"jsonrpc":"2.0","result":[],"id":2}"#)
        let batch = String(decoding: rpc(phone, "[" + reads.joined(separator: ",") + "]").body, as: UTF8.self)
        #expect(batch == "[" + alone.joined(separator: ",") + "]", "each call's answer as alone, in order")

        // A change within the batch: the calls after it read again.
        let changing = [stream(#"{"IdPhoto":3}"#, id: 1), #"{"jsonrpc":"2.0","method":"delete","params":{"IdPhoto":3},"id":2}"#,
                        stream(#"{"IdPhoto":3}"#, id: 3), stream(#"{"IdPhoto":2}"#, id: 4)]
        #expect(try answer(phone, "[" + changing.joined(separator: ",") + "]") == json(#"""
            [{"jsonrpc":"2.0","result":[{"IdPhoto":"3","title":"b","IdUser":"1","username":"alice"}],"id":1},
             {"jsonrpc":"2.0","result":{"successful":1},"id":2},
             {"jsonrpc":"2.0","result":[],"id":3},
             {"jsonrpc":"2.0","result":[{"IdPhoto":"2","title":"a","IdUser":"1","username":"alice"}],"id":4}]
            """#))
        #expect(try phone.photos.deleteOwned(id: 2, by: 1) == .deleted) // behind the server's back: no generation bump
        #expect(String(decoding: rpc(phone, stream(#"{"IdPhoto":2}"#, id: 1)).body, as: UTF8.self)
                == #"{"jsonrpc":"2.0","result":[],"id":1}"#, "nothing read ahead is left after the batch")
    }

    @Test func limitsAndHostileBodies() throws {
        let phone = try AppHarness()
        let call = #"{"jsonrpc":"2.0","method":"effects","id":1}"#
        let batch = "[" + Array(repeating: call, count: JSONRPCService.maxBatch).joined(separator: ",") + "]"
        #expect(String(decoding: rpc(phone, batch).body, as: UTF8.self).ranges(of: #""result""#).count == 20)
        let tooMany = "[" + Array(repeating: call, count: JSONRPCService.maxBatch + 1).joined(separator: ",") + "]"
        #expect(try answer(phone, tooMany) == json(#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}"#))
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(try answer(phone, deep) == json(#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}"#))
        for hostile in ["", "\u{0}", #"{"jsonrpc":"2.0","method":"effects","id":1} x"#, #"{"a":"\ud800"}"#, "\"\u{1}\"", "01", "1.", "[1,]"] {
            #expect(try answer(phone, hostile) == json(#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}"#),
                    "\(hostile.debugDescription)")
        }
        #expect(try answer(phone, #"{"jsonrpc":"1.0","method":"effects","id":1}"#)
                == json(#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":1}"#))
    }

    @Test func stateChangesFromAnotherWebSiteAreRefused() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        _ = try phone.photos.add(userID: 1, title: Array("t".utf8), publish: { _ in }, unpublish: { _ in })
        let like = rpc(phone, #"{"jsonrpc":"2.0","method":"like","params":{"IdPhoto":2},"id":1}"#, crossOrigin: true)
        #expect(String(decoding: like.body, as: UTF8.self)
                == #"{"jsonrpc":"2.0","error":{"code":-32003,"message":"Requests from other web sites are not allowed"},"id":1}"#)
        #expect(phone.photos.votes.isEmpty)
        let stream = rpc(phone, #"{"jsonrpc":"2.0","method":"stream","id":1}"#, crossOrigin: true)
        #expect(String(decoding: stream.body, as: UTF8.self).contains(#""result":[{"IdPhoto":"2""#))
        var form = FormData()
        form.setField(Array("command".utf8), Array("delete".utf8))
        form.setField(Array("IdPhoto".utf8), Array("2".utf8))
        let refused = phone.api.handle(APIRequest(parameters: form, sessionCookie: phone.cookie, isCrossOrigin: true))
        #expect(String(decoding: refused.body, as: UTF8.self) == #"{"error":"Requests from other web sites are not allowed"}"#)
        #expect(phone.photos.rows.count == 1)
    }

    @Test func discoverAnswersAnOpenRPCDocument() throws {
        let phone = try AppHarness()
        let document = try #require(try answer(phone, #"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#)?["result"])
        #expect(document["openrpc"] == .string(Array("1.2.6".utf8)))
        guard case .array(let methods)? = document["methods"] else { Issue.record("no methods"); return }
        let names = methods.compactMap { method -> String? in
            guard case .string(let name)? = method["name"] else { return nil }
            return String(decoding: name, as: UTF8.self)
        }
        #expect(Set(names) == Set(phone.api.router.descriptors.filter(\.isJSONRPCMethod).map(\.name)))
        // Every command but upload and preview, which take a file (multipart only), and export, which answers one;
        // search is one since it is derived.
        #expect(names.count == phone.api.router.descriptors.count - 3)
        // As @open-rpc/client-js asks (params `[]` when there are none), and `null`.
        for none in ["[]", "null"] {
            let asked = try answer(phone, #"{"jsonrpc":"2.0","method":"rpc.discover","params":"# + none + #","id":2}"#)
            #expect(asked?["result"]?["openrpc"] == .string(Array("1.2.6".utf8)), "params \(none)")
            #expect(try answer(phone, #"{"jsonrpc":"2.0","method":"effects","params":"# + none + #","id":3}"#)?["result"] != nil)
        }
    }
}
