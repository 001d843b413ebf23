/// The `extras` of Flickr's photo lists (search, getRecent,
/// getPublicPhotos), in the order Flickr writes what they add to a photo.
/// Each is answered: with our data where we have it, with Flickr's own
/// default where we keep nothing of the kind (docs/API.md says which).
/// A name not here is ignored, as Flickr ignores it.
enum FlickrExtra: String, CaseIterable {
    case license
    case description
    case dateUpload = "date_upload"
    case lastUpdate = "last_update"
    case dateTaken = "date_taken"
    case ownerName = "owner_name"
    case iconServer = "icon_server"
    case originalFormat = "original_format"
    case views
    case tags
    case machineTags = "machine_tags"
    case originalDimensions = "o_dims"
    case geo
    case pathAlias = "path_alias"
    case media
    case urlSquare75 = "url_sq", urlSquare150 = "url_q", urlThumbnail = "url_t", urlSmall240 = "url_s"
    case urlSmall320 = "url_n", urlSmall400 = "url_w", urlMedium = "url_m", urlMedium640 = "url_z"
    case urlMedium800 = "url_c", urlLarge = "url_l", urlOriginal = "url_o"

    /// The size of a `url_*` extra.
    var size: PhotoSize? {
        switch self {
        case .urlSquare75: .square75
        case .urlSquare150: .square150
        case .urlThumbnail: .thumbnail
        case .urlSmall240: .small240
        case .urlSmall320: .small320
        case .urlSmall400: .small400
        case .urlMedium: .medium
        case .urlMedium640: .medium640
        case .urlMedium800: .medium800
        case .urlLarge: .large
        case .urlOriginal: .original
        default: nil
        }
    }

    /// The extras named in a comma-separated `extras` (spaces around names
    /// allowed: `flickr_api` joins a list with ", "), in Flickr's order.
    static func requested(_ text: String) -> [FlickrExtra] {
        let names = Set(text.split(separator: ",").map { $0.trimmingSpaces })
        return allCases.filter { names.contains($0.rawValue) }
    }
}
