/// One Flickr method call's parameters, read with Flickr's leniency (a
/// `page` or `per_page` out of range is brought into range, not refused),
/// and the photo elements in Flickr's shape.
struct FlickrCall {
    let parameters: [String: [UInt8]]
    /// Where the photo files are served (`…/upload/`).
    let photoURL: String

    /// Our square thumbnail (the 2012 app's), served for Flickr's small sizes.
    static let thumbnailSide: Int64 = 180
    /// `url_*` extras of the small sizes (the thumbnail) and the large ones (the photo).
    static let thumbnailSizes = ["url_sq", "url_q", "url_t", "url_s"]
    static let photoSizes = ["url_n", "url_w", "url_m", "url_z", "url_c", "url_l", "url_o"]

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
        if terms.isEmpty && self.text("user_id") == nil { throw FlickrError.parameterlessSearch }
        return terms
    }

    /// `user_id` (our IdUser); nil when not given.
    func userID() throws -> Int64? {
        guard text("user_id") != nil else { return nil }
        guard let id = wholeNumber("user_id") else { throw FlickrError.userNotFound }
        return id
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

    private func thumbnailURL(_ photo: PhotoRecord) -> [UInt8] { Array("\(photoURL)\(photo.id)-thumb.jpg".utf8) }
    private func fullURL(_ photo: PhotoRecord) -> [UInt8] { Array("\(photoURL)\(photo.id).jpg".utf8) }

    /// Flickr's photo identity: ids as strings; no secret or server of ours
    /// yet (the url_* extras carry the URLs), farm 0.
    private func identity(_ photo: PhotoRecord) -> [(String, FlickrElement.Value)] {
        [("id", .text(Array(String(photo.id).utf8))), ("secret", .text([])), ("server", .text(Array("0".utf8))),
         ("farm", .number(0))]
    }

    /// Whether the extras need the photos' details (`listed`'s `details`).
    var wantsDetails: Bool { !extras.isDisjoint(with: ["date_upload", "o_dims"]) }

    /// A photo of a list (search, getRecent, getPublicPhotos) with its
    /// extras; `details`: its upload's time and size, if known (without
    /// them `dateupload` and `o_width`/`o_height` are left out).
    func listed(_ photo: PhotoRecord, details: PhotoDetails? = nil) -> FlickrElement {
        var attributes = identity(photo)
        attributes.insert(("owner", .text(Array(String(photo.userID).utf8))), at: 1)
        attributes += [("title", .text(photo.title ?? [])), ("ispublic", .number(1)), ("isfriend", .number(0)),
                       ("isfamily", .number(0))]
        let wanted = extras
        // Flickr's order and types: dateupload before ownername, strings both.
        if wanted.contains("date_upload"), let details {
            attributes.append(("dateupload", .text(Array(String(details.created).utf8))))
        }
        if wanted.contains("owner_name") { attributes.append(("ownername", .text(photo.username ?? []))) }
        if wanted.contains("o_dims"), let details {
            attributes += [("o_width", .text(Array(String(details.width).utf8))),
                           ("o_height", .text(Array(String(details.height).utf8)))]
        }
        for size in Self.thumbnailSizes where wanted.contains(size) {
            let suffix = size.dropFirst(4)
            attributes += [(size, .text(thumbnailURL(photo))), ("height_\(suffix)", .number(Self.thumbnailSide)),
                           ("width_\(suffix)", .number(Self.thumbnailSide))]
        }
        for size in Self.photoSizes where wanted.contains(size) { attributes.append((size, .text(fullURL(photo)))) }
        return FlickrElement("photo", attributes)
    }

    /// `flickr.photos.getInfo`.
    func info(_ photo: PhotoRecord) -> FlickrElement {
        FlickrElement("photo", identity(photo) + [("license", .text(Array("0".utf8))), ("media", .text(Array("photo".utf8)))],
                      children: [
                          FlickrElement("owner", [("nsid", .text(Array(String(photo.userID).utf8))),
                                                  ("username", .text(photo.username ?? []))]),
                          FlickrElement("title", content: photo.title ?? []),
                          FlickrElement("description", content: []),
                          FlickrElement("visibility", [("ispublic", .number(1)), ("isfriend", .number(0)), ("isfamily", .number(0))]),
                          FlickrElement("comments", content: Array("0".utf8)),
                          FlickrElement("urls", children: [
                              FlickrElement("url", [("type", .text(Array("photopage".utf8)))], content: fullURL(photo)),
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

    /// `flickr.photos.getSizes`: the thumbnail (as Flickr's squares) and the photo.
    func sizes(_ photo: PhotoRecord) -> FlickrElement {
        func size(_ label: String, _ source: [UInt8], side: Int64?) -> FlickrElement {
            var attributes: [(String, FlickrElement.Value)] = [("label", .text(Array(label.utf8)))]
            if let side { attributes += [("width", .number(side)), ("height", .number(side))] }
            return FlickrElement("size", attributes + [("source", .text(source)), ("url", .text(source)),
                                                       ("media", .text(Array("photo".utf8)))])
        }
        return FlickrElement("sizes", [("canblog", .number(0)), ("canprint", .number(0)), ("candownload", .number(1))],
                             children: [size("Square", thumbnailURL(photo), side: Self.thumbnailSide),
                                        size("Large Square", thumbnailURL(photo), side: Self.thumbnailSide),
                                        size("Original", fullURL(photo), side: nil)],
                             list: "size")
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
