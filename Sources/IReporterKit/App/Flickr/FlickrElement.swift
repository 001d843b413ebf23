/// One element of a Flickr answer. Flickr's REST XML and its JSON are two
/// spellings of one tree: an attribute is a key (a number where Flickr
/// sends a number: clients parse `page`, `farm`, `ispublic` as numbers and
/// `id`, `secret`, `server` as strings), text content is `"_content"`, and
/// the children of a list (`photo`, `method`, `size`) an array, also an empty one.
/// Flickr's `null` (a `path_alias` a user never chose) is `""` in XML.
public struct FlickrElement: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case text([UInt8])
        case number(Int64)
        case null

        static func string(_ text: String) -> Value { .text(Array(text.utf8)) }
        /// A number Flickr writes as a string (`"dateupload":"1700000000"`).
        static func numeral(_ number: Int64) -> Value { .text(Array(String(number).utf8)) }
    }

    public var name: String
    public var attributes: [(key: String, value: Value)]
    public var content: Value?
    public var children: [FlickrElement]
    /// The name of the children that are a list: a JSON array even when
    /// there is one or none.
    public var list: String?

    public init(_ name: String, _ attributes: [(String, Value)] = [], content: [UInt8]? = nil,
                children: [FlickrElement] = [], list: String? = nil) {
        self.name = name
        self.attributes = attributes.map { (key: $0.0, value: $0.1) }
        self.content = content.map(Value.text)
        self.children = children
        self.list = list
    }

    /// An element whose content is a number (`people.getInfo`'s `<count>`: a number in JSON).
    public init(_ name: String, number: Int64) {
        self.init(name)
        content = .number(number)
    }

    public static func == (left: FlickrElement, right: FlickrElement) -> Bool {
        left.name == right.name && left.content == right.content && left.children == right.children
            && left.list == right.list && left.attributes.map(\.key) == right.attributes.map(\.key)
            && left.attributes.map(\.value) == right.attributes.map(\.value)
    }

    // MARK: REST XML

    func xml(into out: inout [UInt8], depth: Int) {
        out += Array(String(repeating: "\t", count: depth).utf8) + Array("<\(name)".utf8)
        for (key, value) in attributes {
            out += Array(" \(key)=\"".utf8)
            Self.xml(value, into: &out)
            out.append(UInt8(ascii: "\""))
        }
        if content == nil && children.isEmpty {
            out += Array(" />\n".utf8)
            return
        }
        out.append(UInt8(ascii: ">"))
        if let content { Self.xml(content, into: &out) }
        if !children.isEmpty {
            out.append(UInt8(ascii: "\n"))
            for child in children { child.xml(into: &out, depth: depth + 1) }
            out += Array(String(repeating: "\t", count: depth).utf8)
        }
        out += Array("</\(name)>\n".utf8)
    }

    private static func xml(_ value: Value, into out: inout [UInt8]) {
        switch value {
        case .text(let bytes): Markup.escape(bytes, into: &out)
        case .number(let number): out += Array(String(number).utf8)
        case .null: break
        }
    }

    // MARK: JSON

    /// The element's members (without braces): attributes, content, children.
    func jsonMembers(into out: inout [UInt8]) {
        var first = true
        func key(_ name: String) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out += Array("\"\(name)\":".utf8)
        }
        for (name, value) in attributes {
            key(name)
            Self.json(value, into: &out)
        }
        if let content {
            key("_content")
            Self.json(content, into: &out)
        }
        if let list, !children.contains(where: { $0.name == list }) {
            key(list)
            out += Array("[]".utf8)
        }
        // The children by name, in the order of each name's first, in one
        // pass (a filter per child was quadratic: echo has one per parameter).
        var named: [String: [FlickrElement]] = [:]
        var names: [String] = []
        for child in children {
            if named[child.name] == nil { names.append(child.name) }
            named[child.name, default: []].append(child)
        }
        for name in names {
            let named = named[name] ?? []
            let child = named[0]
            key(child.name)
            if child.name == list {
                out.append(UInt8(ascii: "["))
                for (index, element) in named.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    element.jsonObject(into: &out)
                }
                out.append(UInt8(ascii: "]"))
            } else {
                child.jsonObject(into: &out)
            }
        }
    }

    func jsonObject(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        jsonMembers(into: &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func json(_ value: Value, into out: inout [UInt8]) {
        switch value {
        case .text(let bytes): jsonString(bytes, into: &out)
        case .number(let number): out += Array(String(number).utf8)
        case .null: out += Array("null".utf8)
        }
    }

    /// A JSON string that is also safe inside a `<script>` (JSONP): `<`, `>`,
    /// `&` and the two JavaScript line separators are escaped.
    static func jsonString(_ bytes: [UInt8], into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in StoredText.scalars(bytes) {
            switch scalar.value {
            case 0x22: out += Array("\\\"".utf8)
            case 0x5C: out += Array("\\\\".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0..<0x20, 0x3C, 0x3E, 0x26, 0x2028, 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += Array(("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex).utf8)
            // (the common case: one byte, no String made)
            case 0x20..<0x80: out.append(UInt8(scalar.value))
            default: UTF8.encode(scalar) { out.append($0) }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
