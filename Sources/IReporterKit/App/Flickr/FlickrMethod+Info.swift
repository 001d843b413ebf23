/// What `flickr.reflection.getMethodInfo` says of each method, in Flickr's
/// shape (clients that build themselves from reflection, node-flickrapi
/// among them, ask it of every method `getMethods` lists).
extension FlickrMethod {
    var info: [FlickrElement] {
        [FlickrElement("method", [("name", .string(rawValue)), ("needslogin", .number(0)), ("needssigning", .number(0)),
                                  ("requiredperms", .number(0))],
                       children: [FlickrElement("description", content: Array(summary.utf8))]),
         // api_key as Flickr lists it (a number); the others' `optional` are strings, as Flickr's.
         FlickrElement("arguments", children: [FlickrElement("argument", [("name", .string("api_key")), ("optional", .number(0))],
                                                             content: Array("Your API application key.".utf8))]
                       + arguments.map { FlickrElement("argument", [("name", .string($0.name)), ("optional", .string($0.required ? "0" : "1"))],
                                                       content: Array($0.about.utf8)) },
                       list: "argument"),
         FlickrElement("errors", children: errors.map { FlickrElement("error", [("code", .numeral(Int64($0.code))), ("message", .string($0.message))],
                                                                      content: Array($0.message.utf8)) }
                       + Self.commonErrors.map { FlickrElement("error", [("code", .number(Int64($0.code))), ("message", .string($0.message))],
                                                               content: Array($0.message.utf8)) },
                       list: "error")]
    }

    private var summary: String {
        switch self {
        case .peopleFindByUsername: "Return a user's NSID (our IdUser), given their username."
        case .peopleGetInfo: "Get information about a user."
        case .peopleGetPhotos: "Return photos from the given user's photostream."
        case .peopleGetPublicPhotos: "Get a list of public photos for the given user."
        case .photosCommentsGetList: "Returns the comments for a photo."
        case .photosGetInfo: "Get information about a photo."
        case .photosGetRecent: "Returns a list of the latest public photos uploaded."
        case .photosGetSizes: "Returns the available sizes for a photo."
        case .photosSearch: "Return a list of photos matching some criteria: the words of their titles."
        case .reflectionGetMethodInfo: "Returns information for a given API method."
        case .reflectionGetMethods: "Returns a list of available API methods."
        case .testEcho: "A testing method which echo's all parameters back in the response."
        }
    }

    private static let page: [(name: String, required: Bool, about: String)] = [
        ("extras", false, "A comma-delimited list of extra information to fetch for each returned record."),
        ("per_page", false, "Number of photos to return per page (100 by default, at most 500)."),
        ("page", false, "The page of results to return (1 by default)."),
    ]

    private var arguments: [(name: String, required: Bool, about: String)] {
        let dates: [(name: String, required: Bool, about: String)] = [
            ("min_upload_date", false, "Minimum upload date: a Unix timestamp or a MySQL datetime."),
            ("max_upload_date", false, "Maximum upload date: a Unix timestamp or a MySQL datetime."),
        ]
        switch self {
        case .peopleFindByUsername: return [("username", true, "The username of the user to lookup.")]
        case .peopleGetInfo: return [("user_id", true, "The NSID of the user to fetch information about.")]
        case .peopleGetPhotos: return [("user_id", true, "The NSID of the user whose photos to return.")] + dates + Self.page
        case .peopleGetPublicPhotos: return [("user_id", true, "The NSID of the user whose photos to return.")] + Self.page
        case .photosCommentsGetList: return [("photo_id", true, "The id of the photo to fetch comments for.")]
        case .photosGetInfo: return [("photo_id", true, "The id of the photo to get information for.")]
        case .photosGetRecent: return Self.page
        case .photosGetSizes: return [("photo_id", true, "The id of the photo to fetch size information for.")]
        case .photosSearch:
            return [("user_id", false, "The NSID of the user whose photos to search."),
                    ("tags", false, "A comma-delimited list of tags: words of the photos' titles."),
                    ("tag_mode", false, "Either 'any' for an OR combination of tags (the default), or 'all' for an AND combination."),
                    ("text", false, "A free text search: words of the photos' titles.")]
                + dates + [("sort", false, "'relevance'; 'date-posted-asc' or 'date-taken-asc' (oldest first; with text or tags when at most "
                                           + "\(FlickrAPI.maxResults) photos match); else newest first (date-posted-desc).")]
                + Self.page
        case .reflectionGetMethodInfo: return [("method_name", true, "The name of the method to fetch information for.")]
        case .reflectionGetMethods, .testEcho: return []
        }
    }

    private var errors: [FlickrError] {
        switch self {
        case .peopleFindByUsername, .peopleGetInfo, .peopleGetPublicPhotos: [.personNotFound]
        case .peopleGetPhotos: [.argumentsMissing, .userNotFound]
        case .photosCommentsGetList, .photosGetInfo, .photosGetSizes: [.photoNotFound]
        case .photosSearch: [.userNotFound, .parameterlessSearch, .uploadDatesUnavailable]
        case .reflectionGetMethodInfo: [.methodInfoNotFound]
        case .photosGetRecent, .reflectionGetMethods, .testEcho: []
        }
    }

    /// Every method's, as Flickr lists them.
    private static let commonErrors = [FlickrError.invalidAPIKey, .serviceUnavailable, .formatNotFound("xxx"), .methodNotFound("xxx")]
}
