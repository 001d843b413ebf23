/// A title's or comment's plain text as a status's `content`, the HTML
/// Mastodon makes of plain text: markup escaped, paragraphs at blank
/// lines (`<p>…</p>`), other line breaks as `<br />`. Nothing is linked.
public enum StatusContent {
    public static func html(_ text: [UInt8]) -> String {
        let plain = StoredText.text(text)
        guard !plain.isEmpty else { return "" }
        let lines = plain.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.split(whereSeparator: \.isEmpty)
            .map { "<p>" + $0.map(escaped).joined(separator: "<br />") + "</p>" }.joined()
    }

    /// `&`, `<`, `>`, `"` and `'` as Mastodon's (Rails') escaping writes them.
    static func escaped(_ text: Substring) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}
