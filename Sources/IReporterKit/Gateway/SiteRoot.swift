/// Where clients reach this site, for the absolute URLs answers carry
/// (Flickr's photo pages, the Mastodon API's statuses and OAuth metadata).
enum SiteRoot {
    /// The site's root URL (ending in `/`) for answers' absolute URLs:
    /// `public_url`, else the web server's own name for the site
    /// (`SERVER_NAME`: nginx's `server_name`, Apache's `ServerName`) and
    /// port, else the address the connection reached. Never the request's
    /// `Host`: whoever sends one would choose where the answer's links
    /// point, for every client a cache in front hands that answer to.
    static func url(_ request: GatewayRequest, publicURL: String) -> String {
        guard publicURL.isEmpty else { return publicURL }
        let secure = request.param("HTTPS").map { !$0.isEmpty && $0 != "off" } ?? false
        var host = request.param("SERVER_NAME").flatMap { isHostName($0) ? $0 : nil }
            ?? request.param("SERVER_ADDR").flatMap(bracketedAddress) ?? "localhost"
        if let port = request.param("SERVER_PORT"), !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCII),
           port.allSatisfy(\.isNumber), port != (secure ? "443" : "80") {
            host += ":\(port)"
        }
        return "\(secure ? "https" : "http")://\(host)/"
    }

    /// A DNS name (`example.com`, `localhost`): letters, digits, `-` and
    /// dots. Not nginx's catch-all `_` nor a pattern (`*.example.com`).
    static func isHostName(_ name: String) -> Bool {
        (1...253).contains(name.utf8.count) && !name.hasPrefix(".") && !name.hasPrefix("-")
            && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == ".") }
            && name.unicodeScalars.contains { $0.properties.isAlphabetic }
            || name.split(separator: ".").count == 4 && name.allSatisfy { $0.isNumber || $0 == "." } && name.utf8.count <= 15
    }

    /// `SERVER_ADDR` as a URL's host (`[::1]` for IPv6); nil when it is no address.
    private static func bracketedAddress(_ address: String) -> String? {
        guard !address.isEmpty, address.utf8.count <= 45,
              address.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        return address.contains(":") ? "[\(address)]" : address
    }
}
