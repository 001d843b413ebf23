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
