/// How a Flickr answer is written: REST XML (Flickr's default), JSONP
/// (`format=json`: `jsonFlickrApi(…)` or the `jsoncallback` name), or plain
/// JSON (`format=json&nojsoncallback=1`, or any value but empty and `0`,
/// as Flickr reads it: clients send `true`).
public enum FlickrFormat: Equatable {
    case rest
    case jsonp(callback: String)
    case json

    /// The format a request asks for; a `jsoncallback` that is not a plain
    /// JavaScript name (so no script can ride in it) is refused.
    static func requested(_ parameters: [String: [UInt8]]) -> Result<FlickrFormat, FlickrError> {
        let name = parameters["format"].map { String(decoding: $0, as: UTF8.self) } ?? "rest"
        switch name {
        case "rest", "": return .success(.rest)
        case "json":
            if let flag = parameters["nojsoncallback"], !flag.isEmpty, flag != Array("0".utf8) { return .success(.json) }
            guard let callback = parameters["jsoncallback"] else { return .success(.jsonp(callback: "jsonFlickrApi")) }
            guard isJavaScriptName(callback) else { return .failure(.badCallback) }
            return .success(.jsonp(callback: String(decoding: callback, as: UTF8.self)))
        default:
            return .failure(.formatNotFound(String(name.prefix(32).filter { $0.isLetter || $0.isNumber })))
        }
    }

    /// `name(.name)*`, each name `[A-Za-z_$][A-Za-z0-9_$]*`, 1 to 64 bytes
    /// (too short for a Rosetta Flash payload), none of them one of
    /// `scriptRunners`: the page runs `callback({…})` with our answer as
    /// its argument, so a name must not reach a function that runs a string
    /// or opens, writes or navigates (`eval`, `document.write`,
    /// `x.constructor.constructor`, `setTimeout`).
    static func isJavaScriptName(_ bytes: [UInt8]) -> Bool {
        guard (1...64).contains(bytes.count) else { return false }
        for part in bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard let first = part.first, !(0x30...0x39).contains(first) else { return false }
            let allowed = part.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
            }
            if !allowed || scriptRunners.contains(String(decoding: part, as: UTF8.self)) { return false }
        }
        return true
    }

    /// JavaScript's names that run a string as code, reach the function
    /// constructor, or open, write, navigate or talk to other windows.
    static let scriptRunners: Set<String> = [
        "eval", "Function", "constructor", "prototype", "__proto__", "__defineGetter__", "__defineSetter__",
        "__lookupGetter__", "__lookupSetter__", "call", "apply", "bind", "setTimeout", "setInterval", "setImmediate",
        "execScript", "importScripts", "import", "write", "writeln", "open", "alert", "confirm", "prompt", "postMessage",
        "assign", "replace", "navigate", "insertAdjacentHTML",
    ]

    var contentType: String {
        switch self {
        case .rest: "text/xml; charset=utf-8"
        case .jsonp: "text/javascript; charset=utf-8"
        case .json: "application/json; charset=utf-8"
        }
    }

    /// The answer: `children` of `<rsp stat="ok">`, or the failure.
    func body(_ result: Result<[FlickrElement], FlickrError>) -> [UInt8] {
        switch self {
        case .rest:
            var out = Array("<?xml version=\"1.0\" encoding=\"utf-8\" ?>\n".utf8)
            switch result {
            case .success(let children):
                FlickrElement("rsp", [("stat", .text(Array("ok".utf8)))], children: children).xml(into: &out, depth: 0)
            case .failure(let error):
                FlickrElement("rsp", [("stat", .text(Array("fail".utf8)))], children: [
                    FlickrElement("err", [("code", .text(Array(String(error.code).utf8))), ("msg", .text(Array(error.message.utf8)))]),
                ]).xml(into: &out, depth: 0)
            }
            return out
        case .jsonp(let callback):
            return Array("\(callback)(".utf8) + FlickrFormat.json.body(result) + Array(")".utf8)
        case .json:
            var out: [UInt8] = []
            switch result {
            case .success(let children):
                out.append(UInt8(ascii: "{"))
                FlickrElement("rsp", children: children).jsonMembers(into: &out)
                out += Array("\(children.isEmpty ? "" : ",")\"stat\":\"ok\"}".utf8)
            case .failure(let error):
                out += Array("{\"stat\":\"fail\",\"code\":\(error.code),\"message\":".utf8)
                FlickrElement.jsonString(Array(error.message.utf8), into: &out)
                out.append(UInt8(ascii: "}"))
            }
            return out
        }
    }
}
