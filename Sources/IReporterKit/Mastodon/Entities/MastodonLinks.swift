/// The absolute URLs in the entities, from the site's root as clients
/// reach it (`MastodonRequest.siteURL`, `http://example.com/`: the
/// configured public address, never the request's Host). The web client
/// at the root shows a photo (`#/photo/<id>`) and a person (`#/user/<id>`);
/// the photos' sizes are below `/iReporter/` (docs/API.md "Photo sizes").
public struct MastodonLinks: Sendable {
    public let siteURL: String

    public init(siteURL: String) { self.siteURL = siteURL.hasSuffix("/") ? siteURL : siteURL + "/" }

    public func photoPage(_ photoID: Int64) -> String { "\(siteURL)#/photo/\(photoID)" }

    public func accountPage(_ userID: Int64) -> String { "\(siteURL)#/user/\(userID)" }

    /// What a page of this site shows, read back from its URL: a status's
    /// `url` or `uri` (a comment's is its photo's page and its own status
    /// id) or an account's. Apps search for a link to open it in place (a
    /// link tapped in a post, one pasted in their search). The scheme and
    /// the host's case may differ from `siteURL`'s; nil for anything else.
    public enum Target: Equatable, Sendable {
        case photo(Int64)
        case comment(Int64, photoID: Int64)
        case account(Int64)
    }

    public func target(of url: String) -> Target? {
        func withoutScheme(_ text: String) -> Substring? {
            for scheme in ["https://", "http://"] where text.lowercased().hasPrefix(scheme) { return text.dropFirst(scheme.count) }
            return nil
        }
        guard let site = withoutScheme(siteURL), let link = withoutScheme(url.trimmingSpaces),
              link.lowercased().hasPrefix(site.lowercased()) else { return nil }
        let parts = link.dropFirst(site.count).split(separator: "/", omittingEmptySubsequences: false)
        // IdPhoto and IdUser are `int` columns: far below a comment's status ids.
        guard parts.count >= 3, parts[0] == "#", case .photo(let id)? = StatusID(parts[2]) else { return nil }
        switch (parts[1], parts.count) {
        case ("user", 3): return .account(id)
        case ("photo", 3): return .photo(id)
        case ("photo", 4):
            guard case .comment(let comment)? = StatusID(parts[3]) else { return nil }
            return .comment(comment, photoID: id)
        default: return nil
        }
    }

    /// Every account's picture and header: images of the web client's
    /// folder (web/assets), under a version of their own, the number raised
    /// when they change (the web server keeps `assets/<version>/` a year).
    public var defaultAvatar: String { "\(siteURL)assets/2/avatar.png" }
    public var defaultHeader: String { "\(siteURL)assets/2/header.png" }
    /// The instance's picture: the web client's icon as a 512x512 PNG (the
    /// apps' native image loaders show no SVG).
    public var instanceIcon: String { "\(siteURL)assets/2/icon.png" }

    /// A media waiting for its post (`MediaEndpoints`' file route).
    public func pendingMedia(_ id: Int64, key: String) -> String { "\(siteURL)api/v1/media/\(id)/\(key).jpg" }

    /// A size of a photo; without a secret (a database without migration
    /// 006) the 2012 names: the photo, or its thumbnail for a small size.
    public func photo(_ id: Int64, secret: PhotoSecret?, size: PhotoSize) -> String {
        guard let secret else {
            return size == .original ? "\(siteURL)iReporter/upload/\(id).jpg" : "\(siteURL)iReporter/upload/\(id)-thumb.jpg"
        }
        return "\(siteURL)iReporter/" + PhotoTree.urlPath(id: id, secret: secret, size: size)
    }
}
