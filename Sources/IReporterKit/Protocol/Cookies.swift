/// The `Cookie` request header, parsed as PHP fills `$_COOKIE`: pairs split
/// on `;`, names trimmed, values url-decoded, the first of a repeated name wins.
public enum Cookies {
    public static func parse(_ header: String?) -> [String: [UInt8]] {
        var cookies: [String: [UInt8]] = [:]
        for (name, value) in pairs(header) where !name.isEmpty && cookies[name] == nil {
            cookies[name] = value
        }
        return cookies
    }

    /// The session cookie, unless the header carries several different
    /// ones: then none (a cookie planted for a parent domain or path must
    /// not decide which session is used; PHP took the first).
    public static func sessionID(_ header: String?, name: String = "PHPSESSID") -> [UInt8]? {
        var found: [UInt8]?
        for (pairName, value) in pairs(header) where pairName == name {
            if let found, found != value { return nil }
            found = value
        }
        return found
    }

    /// `name=value` pairs split on `;`, names trimmed, values trimmed and
    /// url-decoded; a pair without `=` is skipped.
    private static func pairs(_ header: String?) -> [(String, [UInt8])] {
        guard let header else { return [] }
        return Array(header.utf8).split(separator: UInt8(ascii: ";")).compactMap { pair in
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            return (String(decoding: HeaderParameters.trimmed(Array(pair[..<equals])), as: UTF8.self),
                    PHPStrings.urlDecode(HeaderParameters.trimmed(Array(pair[(equals + 1)...]))))
        }
    }
}
