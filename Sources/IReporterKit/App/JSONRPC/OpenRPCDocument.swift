/// What `rpc.discover` answers: an OpenRPC document of the service, made
/// from the commands' descriptors: each JSON-RPC method (the commands that
/// take no file) with its typed named parameters, its result's schema and
/// the error codes it may answer.
enum OpenRPCDocument {
    static func json(_ descriptors: [CommandDescriptor]) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 16384)
        json.raw(#"{"openrpc":"1.2.6","info":{"title":"iReporter","version":"#)
        json.string(Server.version)
        json.raw(#","description":"The iReporter photo API: the 2012 app's commands and those the tutorial left for later, as JSON-RPC 2.0 methods with named parameters spelled as the form fields (values may also be sent as strings, as a form sends them). upload and preview take a file: multipart forms to \/iReporter\/ only. docs\/API.md."},"methods":["#)
        for (index, method) in descriptors.filter(\.isJSONRPCMethod).enumerated() {
            if index > 0 { json.raw(",") }
            named(&json, method.name, method.summary)
            json.raw(#","paramStructure":"by-name","params":["#)
            for (position, parameter) in method.parameters.enumerated() {
                if position > 0 { json.raw(",") }
                named(&json, parameter.name, parameter.summary)
                json.raw(parameter.required ? #","required":true,"schema":"# : #","required":false,"schema":"#)
                json.raw(json: schema(of: parameter.kind))
                json.raw("}")
            }
            json.raw(#"],"result":{"name":"result","schema":"#)
            json.raw(json: method.result.schema)
            json.raw(#"},"errors":["#)
            json.raw(json: method.errors.map { ##"{"$ref":"#\/components\/errors\/"## + name(of: $0) + #""}"# }.joined(separator: ","))
            json.raw("]}")
        }
        json.raw(#"],"components":{"errors":{"#)
        for (index, kind) in FailureKind.allCases.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw(json: #"""# + name(of: kind) + #"":{"code":\#(kind.code),"message":"#)
            json.string(kind.summary)
            json.raw("}")
        }
        json.raw("}}}")
        return json.bytes
    }

    /// `{"name":…,"summary":…` (the object left open).
    private static func named(_ json: inout PHPJSONWriter, _ name: String, _ summary: String) {
        json.raw(#"{"name":"#)
        json.string(name)
        json.raw(#","summary":"#)
        json.string(summary)
    }

    /// The error's name under `components/errors`.
    private static func name(of kind: FailureKind) -> String { outcomeName(String(describing: kind)) }

    /// A parameter's JSON Schema: what JSON-RPC sends (numbers may also come as strings).
    static func schema(of kind: CommandParameter.Kind) -> String {
        switch kind {
        case .integer(let range):
            #"{"type":"integer","minimum":\#(range.lowerBound),"maximum":\#(range.upperBound)}"#
        case .phpInteger: #"{"type":"integer"}"#
        case .text(nil): #"{"type":"string"}"#
        case .text(let maxBytes?): #"{"type":"string","maxLength":\#(maxBytes)}"#
        case .choice(let words): #"{"enum":[\#(words.map { "\"\($0)\"" }.joined(separator: ","))]}"#
        case .list(let words):
            #"{"type":"string","pattern":"^(\#(words.joined(separator: "|")))(,(\#(words.joined(separator: "|"))))*$"}"#
        }
    }
}
