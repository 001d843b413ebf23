/// The `Cookie` request header, parsed as PHP fills `$_COOKIE`: pairs split
/// on `;`, names trimmed, values url-decoded, the first of a repeated name wins.
public enum Cookies {
    public static func parse(_ header: String?) -> [String: [UInt8]] {
        guard let header else { return [:] }
        var cookies: [String: [UInt8]] = [:]
        for pair in Array(header.utf8).split(separator: UInt8(ascii: ";")) {
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = String(decoding: HeaderParameters.trimmed(Array(pair[..<equals])), as: UTF8.self)
            guard !name.isEmpty, cookies[name] == nil else { continue }
            cookies[name] = PHPStrings.urlDecode(HeaderParameters.trimmed(Array(pair[(equals + 1)...])))
        }
        return cookies
    }

    /// The session cookie, unless the header carries several different
    /// ones: then none (a cookie planted for a parent domain or path must
    /// not decide which session is used; PHP took the first).
    public static func sessionID(_ header: String?, name: String = "PHPSESSID") -> [UInt8]? {
        guard let header else { return nil }
        var found: [UInt8]?
        for pair in Array(header.utf8).split(separator: UInt8(ascii: ";")) {
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")),
                  String(decoding: HeaderParameters.trimmed(Array(pair[..<equals])), as: UTF8.self) == name else { continue }
            let value = PHPStrings.urlDecode(HeaderParameters.trimmed(Array(pair[(equals + 1)...])))
            if let found, found != value { return nil }
            found = value
        }
        return found
    }
}
