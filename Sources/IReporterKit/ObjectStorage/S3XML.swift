/// The little of S3's XML answers the client reads: element texts, in order.
enum S3XML {
    /// Every `<name>…</name>` text of `xml`, in order.
    static func elements(_ name: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = xml[...]
        while let open = rest.firstRange(of: "<\(name)>"), let close = rest[open.upperBound...].firstRange(of: "</\(name)>") {
            found.append(unescape(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return found
    }

    /// The five predefined entities; S3 writes no others in keys and messages.
    static func unescape(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        return String(text).replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
            .replacing("&apos;", with: "'").replacing("&amp;", with: "&")
    }
}
