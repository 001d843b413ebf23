#if canImport(Glibc)
import Glibc
#endif

/// One Flickr method call's parameters, read with Flickr's leniency (a
/// `page` or `per_page` out of range is brought into range, not refused),
/// and the photo elements in Flickr's shape.
struct FlickrCall {
    let parameters: [String: [UInt8]]
    /// The installation's root as the client reaches it (`…/iReporter/`).
    let siteURL: String

    /// A photo with what its sizes' URLs and dimensions need.
    struct Photo {
        let record: PhotoRecord
        /// nil for a database without migration 006: the 2012 URLs then.
        let secret: PhotoSecret?
        /// nil for a photo from before migration 003: no dimensions then.
        let details: PhotoDetails?
    }

    /// Flickr's `url_*` extras and the sizes they name.
    static let sizeExtras: [(extra: String, size: PhotoSize)] = [
        ("url_sq", .square75), ("url_q", .square150), ("url_t", .thumbnail), ("url_s", .small240), ("url_n", .small320),
        ("url_w", .small400), ("url_m", .medium), ("url_z", .medium640), ("url_c", .medium800), ("url_l", .large),
        ("url_o", .original),
    ]
    /// Without a secret: the 2012 thumbnail (180 square) for the small sizes, the photo for the others.
    static let thumbnailSide: Int64 = 180

    private func text(_ name: String) -> String? {
        parameters[name].map { String(decoding: $0, as: UTF8.self) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    private func wholeNumber(_ name: String) -> Int64? {
        guard let value = text(name), value.count <= 18, value.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(value)
    }

    /// `text` as search terms; none only when a `user_id` narrows the search.
    func searchTerms() throws -> [[UInt8]] {
        let text = parameters["text"] ?? []
        guard text.count <= SearchCommand.maxQueryBytes else { throw FlickrError.textTooLong }
        let terms = SearchWords.queryTerms(text)
        guard terms.count <= SearchCommand.maxTerms else { throw FlickrError.textTooLong }
        // Flickr's limiting parameters: text, a user, an upload date.
        if terms.isEmpty && self.text("user_id") == nil && uploadDate("min_upload_date") == nil
            && uploadDate("max_upload_date") == nil {
            throw FlickrError.parameterlessSearch
        }
        return terms
    }

    /// `user_id` (our IdUser); nil when not given.
    func userID() throws -> Int64? {
        guard text("user_id") != nil else { return nil }
        guard let id = wholeNumber("user_id") else { throw FlickrError.userNotFound }
        return id
    }

    /// `flickr.photos.search`'s photos: `user_id`'s, uploaded between
    /// `min_upload_date` and `max_upload_date` (both included).
    func searchScope() throws -> PhotoScope {
        PhotoScope(userID: try userID(), uploadedFrom: uploadDate("min_upload_date"), uploadedTo: uploadDate("max_upload_date"))
    }

    /// Flickr's two forms: Unix seconds, or a MySQL datetime
    /// `YYYY-MM-DD[ HH:MM:SS]` (UTC here). One that is neither is ignored,
    /// as Flickr ignores it.
    func uploadDate(_ name: String) -> Int64? {
        guard let value = text(name) else { return nil }
        if let seconds = wholeNumber(name) { return seconds }
        let parts = value.split(separator: " ", maxSplits: 1)
        let day = parts[0].split(separator: "-", omittingEmptySubsequences: false).map { Int32($0) }
        let time = parts.count == 2 ? parts[1].split(separator: ":", omittingEmptySubsequences: false).map { Int32($0) }
                                    : [0, 0, 0]
        guard day.count == 3, time.count == 3, let year = day[0], let month = day[1], let date = day[2],
              let hour = time[0], let minute = time[1], let second = time[2],
              (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(date),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        var broken = tm()
        (broken.tm_year, broken.tm_mon, broken.tm_mday) = (year - 1900, month - 1, date)
        (broken.tm_hour, broken.tm_min, broken.tm_sec) = (hour, minute, second)
        return Int64(timegm(&broken))
    }

    func photoID() -> Int64? { wholeNumber("photo_id") }

    /// (page from 1, per_page from 1 to 500; 100 when missing or not a number).
    func paging() -> (page: Int, perPage: Int) {
        let page = Int(min(wholeNumber("page") ?? 1, Int64(FlickrAPI.maxResults)))
        let perPage = Int(wholeNumber("per_page") ?? Int64(FlickrAPI.defaultPerPage))
        return (max(page, 1), perPage < 1 ? FlickrAPI.defaultPerPage : min(perPage, FlickrAPI.maxPerPage))
    }

    var isRelevance: Bool { text("sort") == "relevance" }

    private var extras: Set<String> {
        Set((text("extras") ?? "").split(separator: ",").map { String($0).trimmingSpaces })
    }

    /// A size's URL and, when the photo's size is known, its dimensions.
    private func size(_ size: PhotoSize, of photo: Photo) -> (url: [UInt8], dimensions: (width: Int, height: Int)?) {
        let id = photo.record.id
        guard let secret = photo.secret else {
            if size.isSquare || size == .thumbnail || size == .small240 {
                return (Array("\(siteURL)upload/\(id)-thumb.jpg".utf8), (Int(Self.thumbnailSide), Int(Self.thumbnailSide)))
            }
            return (Array("\(siteURL)upload/\(id).jpg".utf8), nil)
        }
        return (Array((siteURL + PhotoTree.urlPath(id: id, secret: secret, size: size)).utf8),
                photo.details.map { size.dimensions(ofPhoto: $0.width, $0.height) })
    }

    /// Flickr's photo identity: ids as strings, the secret and server of
    /// the sizes' URLs (empty and "0" without migration 006), farm 0.
    private func identity(_ photo: Photo) -> [(String, FlickrElement.Value)] {
        [("id", .text(Array(String(photo.record.id).utf8))), ("secret", .text(Array((photo.secret?.description ?? "").utf8))),
         ("server", .text(Array((photo.secret == nil ? "0" : PhotoTree.server(of: photo.record.id)).utf8))), ("farm", .number(0))]
    }

    /// A photo of a list (search, getRecent, getPublicPhotos) with its extras.
    func listed(_ photo: Photo) -> FlickrElement {
        var attributes = identity(photo)
        attributes.insert(("owner", .text(Array(String(photo.record.userID).utf8))), at: 1)
        attributes += [("title", .text(photo.record.title ?? [])), ("ispublic", .number(1)), ("isfriend", .number(0)),
                       ("isfamily", .number(0))]
        let wanted = extras
        // Flickr's order and types: dateupload before ownername, strings both.
        if wanted.contains("date_upload"), let details = photo.details {
            attributes.append(("dateupload", .text(Array(String(details.created).utf8))))
        }
        if wanted.contains("owner_name") { attributes.append(("ownername", .text(photo.record.username ?? []))) }
        if wanted.contains("o_dims"), let details = photo.details {
            attributes += [("o_width", .text(Array(String(details.width).utf8))), ("o_height", .text(Array(String(details.height).utf8)))]
        }
        for (extra, size) in Self.sizeExtras where wanted.contains(extra) {
            let suffix = extra.dropFirst(4)
            let found = self.size(size, of: photo)
            attributes.append((extra, .text(found.url)))
            if let dimensions = found.dimensions {
                attributes += [("height_\(suffix)", .number(Int64(dimensions.height))), ("width_\(suffix)", .number(Int64(dimensions.width)))]
            }
        }
        return FlickrElement("photo", attributes)
    }

    /// `flickr.photos.getInfo`.
    func info(_ photo: Photo) -> FlickrElement {
        var attributes = identity(photo)
        if let secret = photo.secret {
            // Our original has the same secret as the other sizes.
            attributes += [("originalsecret", .text(Array(secret.description.utf8))), ("originalformat", .text(Array("jpg".utf8)))]
        }
        return FlickrElement("photo", attributes + [("license", .text(Array("0".utf8))), ("media", .text(Array("photo".utf8)))],
                      children: [
                          FlickrElement("owner", [("nsid", .text(Array(String(photo.record.userID).utf8))),
                                                  ("username", .text(photo.record.username ?? []))]),
                          FlickrElement("title", content: photo.record.title ?? []),
                          FlickrElement("description", content: []),
                          FlickrElement("visibility", [("ispublic", .number(1)), ("isfriend", .number(0)), ("isfamily", .number(0))]),
                          FlickrElement("comments", content: Array("0".utf8)),
                          FlickrElement("urls", children: [
                              FlickrElement("url", [("type", .text(Array("photopage".utf8)))], content: size(.original, of: photo).url),
                          ], list: "url"),
                      ])
    }

    /// A comment of `flickr.photos.comments.getList`: `datecreate` a string, as Flickr's.
    func comment(_ comment: CommentRecord) -> FlickrElement {
        FlickrElement("comment", [("id", .text(Array(String(comment.id).utf8))),
                                  ("author", .text(Array(String(comment.userID).utf8))),
                                  ("author_is_deleted", .number(comment.username == nil ? 1 : 0)),
                                  ("authorname", .text(comment.username ?? [])),
                                  ("datecreate", .text(Array(String(comment.created).utf8)))],
                      content: comment.text)
    }

    /// `flickr.photos.getSizes`: as Flickr, the sizes smaller than the
    /// photo and the original (every size, without dimensions, when the
    /// photo's own are unknown); without a secret the 2012 thumbnail (as
    /// both squares) and the photo.
    func sizes(_ photo: Photo) -> FlickrElement {
        func element(_ size: PhotoSize) -> FlickrElement {
            let found = self.size(size, of: photo)
            var attributes: [(String, FlickrElement.Value)] = [("label", .text(Array(size.label.utf8)))]
            if let dimensions = found.dimensions {
                attributes += [("width", .number(Int64(dimensions.width))), ("height", .number(Int64(dimensions.height)))]
            }
            return FlickrElement("size", attributes + [("source", .text(found.url)), ("url", .text(found.url)),
                                                       ("media", .text(Array("photo".utf8)))])
        }
        let listed: [PhotoSize]
        if photo.secret == nil {
            listed = [.square75, .square150, .original]
        } else if let details = photo.details {
            listed = PhotoSize.allCases.filter { size in
                guard let bound = size.bound else { return true }
                return size.isSquare ? bound <= min(details.width, details.height) : bound < max(details.width, details.height)
            }
        } else {
            listed = PhotoSize.allCases
        }
        return FlickrElement("sizes", [("canblog", .number(0)), ("canprint", .number(0)), ("candownload", .number(1))],
                             children: listed.map(element), list: "size")
    }

    static func isXMLName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 64,
              first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_.-".unicodeScalars.contains($0)) }
    }
}

private extension String {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
