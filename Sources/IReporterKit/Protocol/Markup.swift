/// Text put into XML or HTML (an element's text or a double-quoted
/// attribute): the five characters that could end it escaped, control
/// characters XML 1.0 has no place for dropped. Flickr's XML answers and
/// the OAuth authorization page.
enum Markup {
    static func escape(_ bytes: [UInt8], into out: inout [UInt8]) {
        for scalar in StoredText.scalars(bytes) {
            switch scalar.value {
            case 0x26: out += Array("&amp;".utf8)
            case 0x3C: out += Array("&lt;".utf8)
            case 0x3E: out += Array("&gt;".utf8)
            case 0x22: out += Array("&quot;".utf8)
            case 0x09, 0x0A, 0x0D: out += Array("&#\(scalar.value);".utf8)
            // XML 1.0 has no other control characters.
            case 0..<0x20, 0xFFFE, 0xFFFF: continue
            case 0x20..<0x80: out.append(UInt8(scalar.value))
            default: UTF8.encode(scalar) { out.append($0) }
            }
        }
    }

    static func escaped(_ text: String) -> String {
        var out: [UInt8] = []
        escape(Array(text.utf8), into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
