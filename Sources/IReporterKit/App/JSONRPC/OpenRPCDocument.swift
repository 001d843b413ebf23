/// What `rpc.discover` answers: an OpenRPC document of the service (its
/// methods with their named parameters, and the error codes).
enum OpenRPCDocument {
    struct Method {
        let name: String
        let summary: String
        /// (name, required, JSON Schema type)
        let params: [(String, Bool, String)]
    }

    private static let id = ("IdPhoto", true, "integer")
    private static let cursor = [("since", false, "integer"), ("before", false, "integer"), ("count", false, "integer")]

    static let methods: [Method] = [
        Method(name: "register", summary: "Create an account and log it in.",
               params: [("username", true, "string"), ("password", true, "string")]),
        Method(name: "login", summary: "Log in (the session cookie is set).",
               params: [("username", true, "string"), ("password", true, "string"), ("legacy_password", false, "string")]),
        Method(name: "logout", summary: "End the session.", params: []),
        Method(name: "upload", summary: "Not over JSON-RPC: send a multipart form to /iReporter/.",
               params: [("title", false, "string"), ("effect", false, "string")]),
        Method(name: "stream", summary: "The newest photos, a page of them, or one (IdPhoto).",
               params: [("IdPhoto", false, "integer")] + cursor + [("IdUser", false, "integer"), ("extras", false, "string")]),
        Method(name: "comment", summary: "Comment on a photo.", params: [id, ("text", true, "string")]),
        Method(name: "comments", summary: "A photo's comments, newest first.", params: [id] + cursor),
        Method(name: "uncomment", summary: "Remove your comment, or one on your photo.", params: [("IdComment", true, "integer")]),
        Method(name: "like", summary: "Like a photo (one vote per person).", params: [id]),
        Method(name: "dislike", summary: "Dislike a photo (one vote per person).", params: [id]),
        Method(name: "unvote", summary: "Remove your vote.", params: [id]),
        Method(name: "delete", summary: "Delete your photo with its comments and votes.", params: [id]),
        Method(name: "effects", summary: "The effects upload and preview know.", params: []),
        Method(name: "preview", summary: "Not over JSON-RPC: send a multipart form to /iReporter/.",
               params: [("effect", true, "string")]),
    ]

    /// The document, for the methods the service routes.
    static func json(methods routed: [String]) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 4096)
        json.raw(#"{"openrpc":"1.2.6","info":{"title":"iReporter","version":"#)
        json.string(Server.version)
        json.raw(#","description":"The iReporter photo API: the 2012 app's commands and those the tutorial left for later, as JSON-RPC 2.0 methods with named parameters spelled as the form fields. docs\/API.md."},"methods":["#)
        for (index, method) in methods.filter({ routed.contains($0.name) }).enumerated() {
            if index > 0 { json.raw(",") }
            json.raw(#"{"name":"#)
            json.string(method.name)
            json.raw(#","summary":"#)
            json.string(method.summary)
            json.raw(#","paramStructure":"by-name","params":["#)
            for (position, (name, required, type)) in method.params.enumerated() {
                if position > 0 { json.raw(",") }
                json.raw(#"{"name":"#)
                json.string(name)
                json.raw(required ? #","required":true,"schema":{"type":"# : #","required":false,"schema":{"type":"#)
                json.string(type)
                json.raw("}}")
            }
            json.raw(##"],"result":{"name":"result","schema":{}},"errors":[{"$ref":"#\/components\/errors\/application"}]}"##)
        }
        json.raw(#"],"components":{"errors":{"application":{"code":-32000,"message":"the command's own error text"}},"#)
        json.raw(#""x-error-codes":{"-32000":"other failures (text as the form API answers)","-32001":"Authorization required","#)
        json.raw(#""-32002":"no such photo or comment","-32003":"not allowed (someone else's, or another web site)","#)
        json.raw(#""-32004":"too many requests, try again later","-32005":"service temporarily unavailable"}}}"#)
        return json.bytes
    }
}
