/// What a client reads about the server before anything else
/// (docs.joinmastodon.org/methods/instance, nodeinfo.diaspora.software):
/// the instance in Mastodon's v1 and v2 shapes, with the limits of our
/// settings (a photo's size and pixels, its types; a status is a title of
/// 100 bytes with one photo), and NodeInfo 2.0 with the usage figures.
struct InstanceEndpoints: MastodonEndpoints {
    /// The Mastodon API version we follow, and ours; clients read it to know
    /// which endpoints to expect (`4.x`: the v2 instance). Not 4.3, nor its
    /// `api_versions`: with them the official Android app and Ice Cubes ask
    /// only for grouped notifications (`/api/v2/notifications`), which we
    /// do not have, and their notifications tab fails.
    static let version = "4.2.0 (compatible; iReporter \(Server.version))"

    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        router.addIgnoringToken(.get, "/api/v1/instance") { call in .json(try Self.instance(call, api, v2: false)) }
        router.addIgnoringToken(.get, "/api/v2/instance") { call in .json(try Self.instance(call, api, v2: true)) }
        router.addIgnoringToken(.get, "/api/v1/instance/peers") { _ in .emptyList }
        router.addIgnoringToken(.get, "/api/v1/instance/rules") { _ in .emptyList }
        router.addIgnoringToken(.get, "/.well-known/nodeinfo") { call in
            var json = PHPJSONWriter()
            json.raw("{\"links\":[{\"rel\":\"http://nodeinfo.diaspora.software/ns/schema/2.0\",\"href\":")
            json.string(call.request.siteURL + "nodeinfo/2.0")
            json.raw("}]}")
            return .json(json.bytes)
        }
        router.addIgnoringToken(.get, "/nodeinfo/2.0") { _ in
            let counts = try api.services.usage.counts()
            var answer = MastodonAnswer.json(Array("""
                {"version":"2.0","software":{"name":"ireporter","version":"\(Server.version)"},"protocols":[],\
                "services":{"outbound":[],"inbound":[]},"usage":{"users":{"total":\(counts.users)},\
                "localPosts":\(counts.photos)},"openRegistrations":true,"metadata":{}}
                """.utf8))
            answer.contentType = "application/json; profile=\"http://nodeinfo.diaspora.software/ns/schema/2.0#\"; charset=utf-8"
            return answer
        }
    }

    /// The host the clients reached (the site URL's authority).
    static func domain(_ siteURL: String) -> String {
        let afterScheme = siteURL.firstRange(of: "://").map { siteURL[$0.upperBound...] } ?? siteURL[...]
        return String(afterScheme.prefix { $0 != "/" })
    }

    /// The site's origin as a WebSocket URL (`wss://host`): where Mastodon
    /// has its streaming API. We have none (a connection there is a 404 and
    /// clients go on without it), but clients decode the instance with this
    /// URL required, as Pixelfed, which has none either, gives it.
    static func streamingURL(_ siteURL: String) -> String {
        (siteURL.hasPrefix("https://") ? "wss://" : "ws://") + domain(siteURL)
    }

    static func instance(_ call: MastodonCall, _ api: MastodonAPI, v2: Bool) throws -> [UInt8] {
        let site = call.request.siteURL
        let policy = api.services.policy
        var json = PHPJSONWriter()
        json.raw(v2 ? "{\"domain\":" : "{\"uri\":")
        json.string(domain(site))
        json.raw(",\"title\":\"iReporter\",")
        json.raw(v2 ? "\"description\":" : "\"short_description\":")
        json.string("Photos, likes and comments, from the 2012 iPhone app to today's.")
        if !v2 {
            json.raw(",\"description\":\"\",\"email\":\"\"")
        }
        json.raw(",\"version\":")
        json.string(version)
        if v2 {
            json.raw(",\"usage\":{\"users\":{\"active_month\":")
            json.raw(json: "\(try api.services.usage.counts().users)}}")
            json.raw(",\"thumbnail\":{\"url\":")
            json.string(MastodonLinks(siteURL: site).instanceIcon)
            json.raw("},\"languages\":[\"en\"],\"registrations\":{\"enabled\":true,\"approval_required\":false,\"message\":null}")
            json.raw(",\"contact\":{\"email\":\"\",\"account\":null},\"rules\":[]")
        } else {
            let counts = try api.services.usage.counts()
            json.raw(",\"urls\":{\"streaming_api\":")
            json.string(streamingURL(site))
            json.raw("},\"stats\":{\"user_count\":")
            json.raw(json: "\(counts.users),\"status_count\":\(counts.photos),\"domain_count\":0}")
            json.raw(",\"thumbnail\":")
            json.string(MastodonLinks(siteURL: site).instanceIcon)
            json.raw(",\"languages\":[\"en\"],\"registrations\":true,\"approval_required\":false,\"invites_enabled\":false")
            json.raw(",\"contact_account\":null,\"rules\":[]")
        }
        json.raw(",\"configuration\":{")
        if v2 {
            json.raw("\"urls\":{\"streaming\":")
            json.string(streamingURL(site))
            json.raw("},\"vapid\":{\"public_key\":\"\"},")
        }
        json.raw("\"accounts\":{\"max_featured_tags\":0,\"max_pinned_statuses\":0}")
        json.raw(json: ",\"statuses\":{\"max_characters\":\(UploadCommand.maxTitleBytes),\"max_media_attachments\":1,"
                     + "\"characters_reserved_per_url\":23}")
        json.raw(",\"media_attachments\":{\"supported_mime_types\":[")
        json.raw(json: mimeTypes.map { "\"\($0)\"" }.joined(separator: ","))
        json.raw(json: "],\"image_size_limit\":\(policy.maxUploadBytes),\"image_matrix_limit\":\(policy.maxImagePixels),"
                     + "\"video_size_limit\":0,\"video_frame_rate_limit\":0,\"video_matrix_limit\":0,"
                     + "\"description_limit\":\(MediaEndpoints.maxDescriptionBytes)}")
        json.raw(",\"polls\":{\"max_options\":0,\"max_characters_per_option\":0,\"min_expiration\":0,\"max_expiration\":0}")
        if v2 {
            json.raw(",\"translation\":{\"enabled\":false}")
        }
        json.raw("}}")
        return json.bytes
    }

    /// The photos a media upload takes: JPEG, PNG (converted), HEIC where
    /// this host's libgd reads it.
    static var mimeTypes: [String] {
        ["image/jpeg", "image/png"] + (UploadedImage.decodesHEIC ? ["image/heic", "image/heif"] : [])
    }
}
