/// What an app may register as a redirect URI (RFC 6749 §3.1.2): an
/// absolute URI without a fragment (a web page, a custom scheme an app on a
/// phone answers to, a loopback port of a command-line client), or the
/// out-of-band name, for which the code is shown to be copied by hand.
/// Never a scheme a browser would run or read locally: the consent page
/// sends the browser there.
enum RedirectURI {
    static let outOfBand = "urn:ietf:wg:oauth:2.0:oob"
    static let maxLength = 2000
    private static let refusedSchemes: Set<String> = ["javascript", "data", "vbscript", "file", "blob", "about"]

    /// Why `uri` cannot be registered; nil when it can.
    static func refusal(_ uri: String) -> String? {
        if uri == outOfBand { return nil }
        guard uri.utf8.count <= maxLength else { return "Redirect URI is too long" }
        guard let scheme = scheme(of: uri), uri.utf8.count > scheme.utf8.count + 1 else {
            return "Redirect URI must be an absolute URI."
        }
        guard !refusedSchemes.contains(scheme) else { return "Redirect URI uses a scheme that cannot receive a code." }
        guard !uri.contains("#") else { return "Redirect URI cannot contain a fragment." }
        guard uri.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            return "Redirect URI must be an absolute URI."
        }
        if scheme == "http" || scheme == "https" {
            guard let origin = WebOrigin(uri), uri.lowercased().hasPrefix("\(scheme)://"), !origin.host.isEmpty else {
                return "Redirect URI must be an absolute URI."
            }
        }
        return nil
    }

    /// The scheme, lower-cased (RFC 3986 §3.1: a letter, then letters,
    /// digits, `+`, `-`, `.`, before the first colon).
    static func scheme(of uri: String) -> String? {
        guard let colon = uri.firstIndex(of: ":") else { return nil }
        let scheme = uri[..<colon]
        guard let first = scheme.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
              scheme.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
                                                    || $0 == "+" || $0 == "-" || $0 == ".") }) else { return nil }
        return scheme.lowercased()
    }

    /// `uri` with the parameters added to its query (RFC 6749 §4.1.2: any
    /// query it has is kept).
    static func adding(_ parameters: [(String, String)], to uri: String) -> String {
        let query = parameters.map { "\($0.0)=\(URLEncoding.percentEncoded($0.1))" }.joined(separator: "&")
        return uri + (uri.contains("?") ? "&" : "?") + query
    }
}
