/// A web origin as browsers compare them: scheme, host and port, the port
/// always written (`http://example.com` is `http://example.com:80`).
/// Two pages on different ports of one host name are different origins,
/// though they are the same *site* (their cookies, `SameSite` included, are
/// shared): issue 26's attacker was a page on another port of the name.
struct WebOrigin: Equatable {
    let scheme: String
    let host: String
    let port: Int

    /// `scheme://host[:port]`, as in `Origin`, or the start of a URL (a
    /// `Referer`): a path, query or fragment after the authority is ignored.
    /// nil for anything else: another scheme, user information, a port that
    /// is not a number (`http://127.0.0.1:8480.evil.com`), no host, `null`.
    init?(_ text: String) {
        let lowered = text.lowercased()
        guard let separator = lowered.firstRange(of: "://") else { return nil }
        let scheme = String(lowered[..<separator.lowerBound])
        let rest = lowered[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let (host, port) = Self.split(authority: authority), let defaultPort = Self.defaultPort(of: scheme)
        else { return nil }
        self.init(scheme: scheme, host: host, port: port ?? defaultPort)
    }

    init(scheme: String, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    static func defaultPort(of scheme: String) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// `example.com` and 8080 of `example.com:8080`, `[::1]` and nil of
    /// `[::1]`; nil for an empty host, user information or a bad port.
    static func split(authority: Substring) -> (host: String, port: Int?)? {
        let host: Substring, portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return nil }
            portText = after.isEmpty ? nil : after.dropFirst()
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
            portText = nil
        }
        guard !host.isEmpty, !host.contains("@"), !host.contains(where: \.isWhitespace) else { return nil }
        guard let portText else { return (String(host), nil) }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit),
              let port = Int(portText), (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }
}

extension WebOrigin {
    /// The origin the request was addressed to, as the browser wrote it.
    /// Scheme: `X-Forwarded-Proto` (a proxy's), else `HTTPS`, else
    /// `REQUEST_SCHEME`. Host and port: `X-Forwarded-Host`, else `Host`;
    /// a port the host does not write comes from `X-Forwarded-Port`, else
    /// (no proxy) `SERVER_PORT`: Debian's fastcgi_params pass nginx's
    /// `$host`, which has no port. A browser cannot add the `X-Forwarded-*`
    /// headers to a request another site makes it send (they are not CORS
    /// safe-listed, and we approve no preflight), so only a proxy or a
    /// non-browser client sets them, and trusting them opens nothing.
    /// nil without a host.
    static func own(of request: any GatewayRequest) -> WebOrigin? {
        func first(_ name: String) -> String? {
            guard let value = request.param(name) else { return nil }
            let item = value.prefix { $0 != "," }.trimmingSpaces
            return item.isEmpty ? nil : item.lowercased()
        }
        let forwardedScheme = first("HTTP_X_FORWARDED_PROTO").flatMap { defaultPort(of: $0) != nil ? $0 : nil }
        let https = request.param("HTTPS").map { !$0.isEmpty && $0.lowercased() != "off" } ?? false
        let scheme = forwardedScheme ?? (https ? "https" : first("REQUEST_SCHEME") == "https" ? "https" : "http")
        guard let authority = first("HTTP_X_FORWARDED_HOST") ?? first("HTTP_HOST"),
              let (host, written) = split(authority: authority[...]) else { return nil }
        let port: Int?
        if let written {
            port = written
        } else if let forwarded = first("HTTP_X_FORWARDED_PORT") {
            port = Int(forwarded)
        } else if forwardedScheme != nil {
            port = defaultPort(of: scheme)
        } else {
            port = request.param("SERVER_PORT").flatMap { Int($0) } ?? defaultPort(of: scheme)
        }
        guard let port, (1...65535).contains(port) else { return nil }
        return WebOrigin(scheme: scheme, host: host, port: port)
    }

    /// Whether a browser says the request comes from another origin:
    /// `Sec-Fetch-Site` other than `same-origin` (or `none`, typed by the
    /// user), or an `Origin` (without one, a `Referer`) that is not exactly
    /// the request's own origin: another scheme, host or port, `null`, or
    /// anything unreadable. A request with neither header is not a browser's
    /// cross-origin write (browsers send `Origin` with every cross-origin
    /// POST and fetch): the 2012 app, curl.
    static func isCrossOrigin(_ request: any GatewayRequest) -> Bool {
        if let site = request.param("HTTP_SEC_FETCH_SITE")?.lowercased(), site != "same-origin" && site != "none" {
            return true
        }
        guard let claimed = request.param("HTTP_ORIGIN") ?? request.param("HTTP_REFERER") else { return false }
        guard let origin = WebOrigin(claimed), let own = own(of: request) else { return true }
        return origin != own
    }
}

private extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
