#if canImport(Glibc)
import Glibc
#endif

/// One Flickr method call's parameters, read with Flickr's leniency (a
/// `page` or `per_page` out of range is brought into range, not refused),
/// and the photo elements in Flickr's shape.
struct FlickrCall {
    let parameters: [String: [UInt8]]
    /// The installation's root as clients reach it (`…/iReporter/`), from
    /// the configured public address, never from the request's Host.
    let siteURL: String

    /// The web client's page (`web/`, at the host's root), whose hash
    /// routes show a photo (`#/photo/<id>`) or a person's photos (`#/user/<id>`).
    var webURL: String {
        siteURL.hasSuffix("/iReporter/") ? String(siteURL.dropLast("iReporter/".count)) : siteURL
    }

    /// A photo with what its sizes' URLs and dimensions need.
    struct Photo {
        let record: PhotoRecord
        /// nil for a database without migration 006: the 2012 URLs then.
        let secret: PhotoSecret?
        /// nil for a photo from before migration 003: no dimensions then.
        let details: PhotoDetails?
        /// The original's size read from its file, for a photo without
        /// details (a PHP-era one): `getSizes`, and a list asked for sizes'
        /// URLs or `o_dims` (flickr_api reads every size's width and height
        /// beside its URL, and fails the whole page on one missing).
        var measured: (width: Int, height: Int)? = nil

        var dimensions: (width: Int, height: Int)? { details.map { ($0.width, $0.height) } ?? measured }
    }

    /// Without a secret: the 2012 thumbnail (180 square) for the small sizes, the photo for the others.
    static let thumbnailSide: Int64 = 180

    private func text(_ name: String) -> String? {
        parameters[name].map { String(decoding: $0, as: UTF8.self) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A whole number of at most 18 digits, nil when not one (Flickr's leniency).
    private func wholeNumber(_ name: String) -> Int64? {
        parameters[name].flatMap { CommandParameter.wholeNumber($0, in: 0...999_999_999_999_999_999) }
    }

    /// `text` and `tags` (comma-separated; our photos' tags are their
    /// titles' words) as the searches to run, each a list of terms all
    /// required: one, or with several tags and `tag_mode` `any` (Flickr's
    /// default) one per tag (its words and the text's, at most
    /// `maxTagSearches`), whose photos are joined. Only one, of no term,
    /// when a `user_id` or an upload date narrows the search.
    func searches() throws -> [[[UInt8]]] {
        let text = parameters["text"] ?? []
        let tags = (parameters["tags"] ?? []).split(separator: UInt8(ascii: ",")).map(Array.init)
        guard text.count + tags.reduce(0, { $0 + $1.count + 1 }) <= SearchCommand.maxQueryBytes else { throw FlickrError.textTooLong }
        let textTerms = Self.terms(text)
        let tagTerms = tags.map(Self.terms).filter { !$0.isEmpty }
        let searches = self.text("tag_mode") != "all" && tagTerms.count > 1
            ? tagTerms.prefix(Self.maxTagSearches).map { Self.searched(Self.unique(textTerms + $0)) }
            : [Self.searched(Self.unique(textTerms + tagTerms.joined()))]
        // Flickr's limiting parameters: text, tags, a user, an upload date.
        if searches[0].isEmpty && self.text("user_id") == nil && uploadDate("min_upload_date") == nil
            && uploadDate("max_upload_date") == nil {
            throw FlickrError.parameterlessSearch
        }
        return searches
    }

    /// Tags searched apart with `tag_mode=any`; more are left out.
    static let maxTagSearches = 6

    /// A text's search terms. Flickr's `-word` excludes the word. Our search
    /// cannot leave photos out, so it is ignored: read as a word, it was
    /// required, and `sunset -beach` found the beach alone.
    private static func terms(_ text: [UInt8]) -> [[UInt8]] {
        let wanted = text.split(separator: UInt8(ascii: " ")).filter { $0.first != UInt8(ascii: "-") }
        return SearchWords.queryTerms(Array(wanted.joined(separator: [UInt8(ascii: " ")])))
    }

    private static func unique(_ terms: [[UInt8]]) -> [[UInt8]] {
        var seen = Set<[UInt8]>()
        return terms.filter { seen.insert($0).inserted }
    }

    /// The terms a search takes (`SearchCommand.maxTerms`): Flickr has no
    /// such limit, so a longer text is searched by its longest terms (the
    /// rarer, as a rule), in the text's order: more photos than Flickr's,
    /// never an error for a sentence.
    static func searched(_ terms: [[UInt8]]) -> [[UInt8]] {
        guard terms.count > SearchCommand.maxTerms else { return terms }
        let longest = terms.indices.sorted { terms[$0].count != terms[$1].count ? terms[$0].count > terms[$1].count : $0 < $1 }
        return longest.prefix(SearchCommand.maxTerms).sorted().map { terms[$0] }
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
    /// (`Self.unixSeconds`). One that is neither is ignored, as Flickr
    /// ignores it.
    func uploadDate(_ name: String) -> Int64? {
        guard let value = text(name) else { return nil }
        return wholeNumber(name) ?? Self.unixSeconds(value)
    }

    /// A date as the Flickr clients' languages write one: Unix seconds with
    /// a fraction (Python's `time.time()`), or a MySQL datetime
    /// `YYYY-MM-DD[( |T)HH:MM[:SS[.fraction]]][Z|±HH[[:]MM]]` (Python's
    /// `str(datetime)` and `isoformat()`), UTC unless it names its offset.
    /// Fractions are cut, as MySQL cuts them from a DATETIME without any.
    static func unixSeconds(_ value: String) -> Int64? {
        var rest = Substring(value)
        let whole = rest.prefix(while: \.isASCIIDigit)
        if !whole.isEmpty, rest.dropFirst(whole.count).first == "." {
            let fraction = rest.dropFirst(whole.count + 1)
            guard whole.count <= 18, (1...20).contains(fraction.count), fraction.allSatisfy(\.isASCIIDigit) else { return nil }
            return Int64(whole)
        }
        func number(digits: ClosedRange<Int>) -> Int32? {
            let run = rest.prefix(while: \.isASCIIDigit).prefix(digits.upperBound)
            guard digits.contains(run.count), let number = Int32(run) else { return nil }
            rest = rest.dropFirst(run.count)
            return number
        }
        func skip(_ character: Character) -> Bool {
            guard rest.first == character else { return false }
            rest = rest.dropFirst()
            return true
        }
        guard let year = number(digits: 4...4), skip("-"), let month = number(digits: 1...2), skip("-"),
              let day = number(digits: 1...2) else { return nil }
        var (hour, minute, second): (Int32, Int32, Int32) = (0, 0, 0)
        if skip(" ") || skip("T") {
            guard let h = number(digits: 1...2), skip(":"), let m = number(digits: 1...2) else { return nil }
            (hour, minute) = (h, m)
            if skip(":") {
                guard let s = number(digits: 1...2) else { return nil }
                second = s
                if skip(".") {
                    let fraction = rest.prefix(while: \.isASCIIDigit)
                    guard (1...20).contains(fraction.count) else { return nil }
                    rest = rest.dropFirst(fraction.count)
                }
            }
        }
        var offset: Int64 = 0
        if !skip("Z"), let sign: Int64 = rest.first == "+" ? 1 : rest.first == "-" ? -1 : nil {
            rest = rest.dropFirst()
            guard let h = number(digits: 2...2) else { return nil }
            let m = skip(":") ? number(digits: 2...2) : rest.isEmpty ? 0 : number(digits: 2...2)
            guard let m, h <= 14, m <= 59 else { return nil }
            offset = sign * (Int64(h) * 3600 + Int64(m) * 60)
        }
        guard rest.isEmpty, (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        var broken = tm()
        (broken.tm_year, broken.tm_mon, broken.tm_mday) = (year - 1900, month - 1, day)
        (broken.tm_hour, broken.tm_min, broken.tm_sec) = (hour, minute, second)
        return Int64(timegm(&broken)) - offset
    }

    func photoID() -> Int64? { wholeNumber("photo_id") }

    /// `people.getInfo`'s `user_id`; nil when missing or not one of our ids.
    func personID() -> Int64? { wholeNumber("user_id") }

    /// (page from 1 to as far as an account's list reaches, per_page from 1
    /// to 500; 100 when missing or not a number; a number too long to read
    /// is as large as it gets).
    func paging() -> (page: Int, perPage: Int) {
        // One past the farthest page any list has: empty, as past a list's end.
        let page = Int(min(wholeNumber("page") ?? 1, Int64(FlickrAPI.maxAccountPhotos) + 1))
        let digits = parameters["per_page"].map { !$0.isEmpty && $0.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } } ?? false
        let perPage = wholeNumber("per_page").map { Int($0) } ?? (digits ? FlickrAPI.maxPerPage : FlickrAPI.defaultPerPage)
        return (max(page, 1), perPage < 1 ? FlickrAPI.defaultPerPage : min(perPage, FlickrAPI.maxPerPage))
    }

    /// How `photos.search` lists its photos (`sort`). Flickr's posted and
    /// taken dates are both the upload time here; interestingness is not
    /// kept, so it lists newest first.
    enum ListOrder { case newest, oldest, relevance }

    var order: ListOrder {
        switch text("sort") {
        case "relevance": .relevance
        case "date-posted-asc", "date-taken-asc": .oldest
        default: .newest
        }
    }

    private var extras: [FlickrExtra] { FlickrExtra.requested(text("extras") ?? "") }

    /// Whether a list's extras show the photos' dimensions (a size's URL, `o_dims`).
    var listsDimensions: Bool { extras.contains { $0.size != nil || $0 == .originalDimensions } }

    /// A size's URL and, when the photo's size is known, its dimensions.
    private func size(_ size: PhotoSize, of photo: Photo) -> (url: [UInt8], dimensions: (width: Int, height: Int)?) {
        let id = photo.record.id
        guard let secret = photo.secret else {
            if size.isSquare || size == .thumbnail || size == .small240 {
                return (Array("\(siteURL)upload/\(id)-thumb.jpg".utf8), (Int(Self.thumbnailSide), Int(Self.thumbnailSide)))
            }
            return (Array("\(siteURL)upload/\(id).jpg".utf8), photo.dimensions)
        }
        return (Array((siteURL + PhotoTree.urlPath(id: id, secret: secret, size: size)).utf8),
                photo.dimensions.map { size.dimensions(ofPhoto: $0.width, $0.height) })
    }

    /// Flickr's photo identity: ids as strings, the secret and server of
    /// the sizes' URLs (empty and "0" without migration 006), farm 0.
    private func identity(_ photo: Photo) -> [(String, FlickrElement.Value)] {
        [("id", .text(Array(String(photo.record.id).utf8))), ("secret", .text(Array((photo.secret?.description ?? "").utf8))),
         ("server", .text(Array((photo.secret == nil ? "0" : PhotoTree.server(of: photo.record.id)).utf8))), ("farm", .number(0))]
    }

    /// A photo of a list (search, getRecent, getPublicPhotos) with its
    /// extras, each spelt and typed as Flickr's (`"dateupload":"…"` a
    /// string, `"datetakengranularity":0` a number).
    func listed(_ photo: Photo) -> FlickrElement {
        var attributes = identity(photo)
        attributes.insert(("owner", .numeral(photo.record.userID)), at: 1)
        attributes += [("title", .text(photo.record.title ?? [])), ("ispublic", .number(1)), ("isfriend", .number(0)),
                       ("isfamily", .number(0))]
        var children: [FlickrElement] = []
        let uploaded = photo.details?.created
        for extra in extras {
            switch extra {
            case .license: attributes.append(("license", .string(Self.license)))
            case .description: children.append(FlickrElement("description", content: []))
            case .dateUpload: if let uploaded { attributes.append(("dateupload", .numeral(uploaded))) }
            case .lastUpdate: attributes.append(("lastupdate", .numeral(uploaded ?? 0)))
            case .dateTaken:
                attributes += [("datetaken", .string(Self.mysqlDateTime(uploaded ?? 0))), ("datetakengranularity", .number(0)),
                               ("datetakenunknown", .string("1"))]
            case .ownerName: attributes.append(("ownername", .text(photo.record.username ?? [])))
            case .iconServer: attributes += [("iconserver", .string("0")), ("iconfarm", .number(0))]
            case .originalFormat:
                if let secret = photo.secret {
                    attributes += [("originalsecret", .string(secret.description)), ("originalformat", .string("jpg"))]
                }
            case .views: attributes.append(("views", .string("0")))
            case .tags: attributes.append(("tags", .string("")))
            case .machineTags: attributes.append(("machine_tags", .string("")))
            case .originalDimensions:
                if let dimensions = photo.dimensions {
                    attributes += [("o_width", .numeral(Int64(dimensions.width))), ("o_height", .numeral(Int64(dimensions.height)))]
                }
            case .geo:
                attributes += [("latitude", .number(0)), ("longitude", .number(0)), ("accuracy", .number(0)), ("context", .number(0))]
            case .pathAlias: attributes.append(("pathalias", .null))
            case .media: attributes += [("media", .string("photo")), ("media_status", .string("ready"))]
            case .urlSquare75, .urlSquare150, .urlThumbnail, .urlSmall240, .urlSmall320, .urlSmall400, .urlMedium,
                 .urlMedium640, .urlMedium800, .urlLarge, .urlOriginal:
                guard let size = extra.size else { continue }
                let suffix = extra.rawValue.dropFirst(4)
                let found = self.size(size, of: photo)
                attributes.append((extra.rawValue, .text(found.url)))
                if let dimensions = found.dimensions {
                    attributes += [("height_\(suffix)", .number(Int64(dimensions.height))),
                                   ("width_\(suffix)", .number(Int64(dimensions.width)))]
                }
            }
        }
        return FlickrElement("photo", attributes, children: children)
    }

    /// Flickr's licence 0, "All Rights Reserved": we keep no licence.
    static let license = "0"

    /// What `flickr.photos.getInfo` says of a photo besides its row.
    struct Info {
        var photo: Photo
        var comments: Int64
        /// The newest comment's time, if any.
        var lastComment: Int64?
    }

    /// `flickr.photos.getInfo`, in the shape of Flickr's answer to a caller
    /// who is not the owner: what we keep (title, owner, upload time, comment
    /// count, sizes' secret), Flickr's defaults for the rest (no description,
    /// tags, notes, people, views, licence 0, taken date unknown).
    func info(_ info: Info) -> FlickrElement {
        let photo = info.photo
        let posted = photo.details?.created ?? 0
        var attributes = identity(photo)
        attributes += [("dateuploaded", .numeral(posted)), ("isfavorite", .number(0)), ("license", .string(Self.license)),
                       ("safety_level", .string("0")), ("rotation", .number(0))]
        if let secret = photo.secret {
            // Our original has the same secret as the other sizes.
            attributes += [("originalsecret", .string(secret.description)), ("originalformat", .string("jpg"))]
        }
        attributes += [("views", .string("0")), ("media", .string("photo"))]
        let lastUpdate = max(posted, info.lastComment ?? 0)
        return FlickrElement("photo", attributes, children: [
            FlickrElement("owner", [("nsid", .numeral(photo.record.userID)), ("username", .text(photo.record.username ?? [])),
                                    ("realname", .string("")), ("location", .string("")), ("iconserver", .string("0")),
                                    ("iconfarm", .number(0)), ("path_alias", .null)]),
            FlickrElement("title", content: photo.record.title ?? []),
            FlickrElement("description", content: []),
            FlickrElement("visibility", [("ispublic", .number(1)), ("isfriend", .number(0)), ("isfamily", .number(0))]),
            FlickrElement("dates", [("posted", .numeral(posted)), ("taken", .string(Self.mysqlDateTime(posted))),
                                    ("takengranularity", .string("0")), ("takenunknown", .string("1")),
                                    ("lastupdate", .numeral(lastUpdate))]),
            FlickrElement("editability", [("cancomment", .number(0)), ("canaddmeta", .number(0))]),
            FlickrElement("publiceditability", [("cancomment", .number(1)), ("canaddmeta", .number(0))]),
            FlickrElement("usage", [("candownload", .number(1)), ("canblog", .number(0)), ("canprint", .number(0)),
                                    ("canshare", .number(1))]),
            FlickrElement("comments", content: Array(String(info.comments).utf8)),
            FlickrElement("notes", list: "note"),
            FlickrElement("people", [("haspeople", .number(0))]),
            FlickrElement("tags", list: "tag"),
            FlickrElement("urls", children: [
                FlickrElement("url", [("type", .string("photopage"))], content: Array("\(webURL)#/photo/\(photo.record.id)".utf8)),
            ], list: "url"),
        ])
    }

    /// `flickr.people.findByUsername`'s `user`: its id (our IdUser) and the name as stored.
    func user(_ user: UserRecord) -> FlickrElement {
        FlickrElement("user", [("id", .numeral(user.id)), ("nsid", .numeral(user.id))],
                      children: [FlickrElement("username", content: user.username)])
    }

    /// `flickr.people.getInfo`: our account as a Flickr person seen by
    /// someone else; the pages are the web client's.
    func person(_ person: PersonRecord) -> FlickrElement {
        let page = Array("\(webURL)#/user/\(person.id)".utf8)
        return FlickrElement("person", [("id", .numeral(person.id)), ("nsid", .numeral(person.id)), ("ispro", .number(0)),
                                        ("is_deleted", .number(0)), ("iconserver", .string("0")), ("iconfarm", .number(0)),
                                        ("path_alias", .null), ("has_stats", .number(0))], children: [
            FlickrElement("username", content: person.username),
            FlickrElement("realname", content: []),
            FlickrElement("location", content: []),
            FlickrElement("description", content: []),
            FlickrElement("photosurl", content: page),
            FlickrElement("profileurl", content: page),
            FlickrElement("mobileurl", content: page),
            FlickrElement("photos", children: [
                FlickrElement("firstdatetaken", content: Array((person.firstUpload.map(Self.mysqlDateTime) ?? "").utf8)),
                FlickrElement("firstdate", content: Array((person.firstUpload.map { String($0) } ?? "").utf8)),
                FlickrElement("count", number: person.photoCount),
            ]),
        ])
    }

    /// Flickr's taken-date form, `YYYY-MM-DD HH:MM:SS` (UTC here: we keep no
    /// time zone; Flickr's is the camera's local time).
    static func mysqlDateTime(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var broken = tm()
        gmtime_r(&time, &broken)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(broken.tm_year + 1900)-\(two(broken.tm_mon + 1))-\(two(broken.tm_mday)) "
            + "\(two(broken.tm_hour)):\(two(broken.tm_min)):\(two(broken.tm_sec))"
    }

    /// A comment of `flickr.photos.comments.getList`: `datecreate` a string,
    /// and the text HTML, as Flickr's (`_content`, which web clients show as
    /// HTML): ours is plain text, so it is escaped.
    func comment(_ comment: CommentRecord) -> FlickrElement {
        FlickrElement("comment", [("id", .text(Array(String(comment.id).utf8))),
                                  ("author", .text(Array(String(comment.userID).utf8))),
                                  ("author_is_deleted", .number(comment.username == nil ? 1 : 0)),
                                  ("authorname", .text(comment.username ?? [])),
                                  ("datecreate", .text(Array(String(comment.created).utf8)))],
                      content: Self.html(comment.text))
    }

    /// `flickr.photos.getSizes`: as Flickr, the sizes smaller than the
    /// photo and the original (every size, without dimensions, when the
    /// photo's own are unknown, its file unread); without a secret the 2012 thumbnail (as
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
        } else if let dimensions = photo.dimensions {
            listed = PhotoSize.allCases.filter { size in
                guard let bound = size.bound else { return true }
                return size.isSquare ? bound <= min(dimensions.width, dimensions.height)
                                     : bound < max(dimensions.width, dimensions.height)
            }
        } else {
            listed = PhotoSize.allCases
        }
        return FlickrElement("sizes", [("canblog", .number(0)), ("canprint", .number(0)), ("candownload", .number(1))],
                             children: listed.map(element), list: "size")
    }

    /// Plain text as HTML's text: the four characters that make markup
    /// escaped, line breaks kept (the XML format escapes what it needs itself).
    private static func html(_ text: [UInt8]) -> [UInt8] {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(text.count)
        for byte in text {
            switch byte {
            case UInt8(ascii: "&"): escaped += Array("&amp;".utf8)
            case UInt8(ascii: "<"): escaped += Array("&lt;".utf8)
            case UInt8(ascii: ">"): escaped += Array("&gt;".utf8)
            case UInt8(ascii: "\""): escaped += Array("&quot;".utf8)
            default: escaped.append(byte)
            }
        }
        return escaped
    }

    static func isXMLName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 64,
              first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_.-".unicodeScalars.contains($0)) }
    }
}
