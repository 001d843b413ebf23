import Testing
@testable import IReporterKit

/// The Flickr-compatible REST methods on the in-memory stores: formats,
/// Flickr's codes and its string/number quirks.
struct FlickrAPITests {
    private static let siteURL = "http://h/iReporter/"

    /// Photos 2 to 4, 1600x1200 with the secrets aaaaaaaaa2 to aaaaaaaaa4.
    private func phone() throws -> AppHarness {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        for (index, title) in ["Sunset <b>&</b>", "Zoë at the beach", "東京タワー"].enumerated() {
            _ = try phone.photos.add(userID: 1, title: Array(title.utf8), details: PhotoDetails(created: 1, width: 1600, height: 1200),
                                     secret: PhotoSecret("aaaaaaaaa\(index + 2)"), publish: { _, _ in }, unpublish: { _ in })
        }
        return phone
    }

    private func call(_ phone: AppHarness, keys: Set<String> = [], key: String? = nil, _ parameters: [String: String])
        -> (contentType: String, body: String) {
        let api = FlickrAPI(services: phone.services, apiKeys: keys)
        let response = api.handle(parameters.mapValues { Array($0.utf8) }, oauthConsumerKey: key, siteURL: Self.siteURL)
        return (response.contentType, String(decoding: response.body, as: UTF8.self))
    }

    @Test func searchInPlainJSONKeepsFlickrsNumbersAndStrings() throws {
        let answer = call(try phone(), ["method": "flickr.photos.search", "text": "zoe", "format": "json", "nojsoncallback": "1",
                                        "extras": "owner_name,url_t,url_o,o_dims"])
        #expect(answer.contentType == "application/json; charset=utf-8")
        #expect(answer.body == #"{"photos":{"page":1,"pages":1,"perpage":100,"total":1,"photo":[{"id":"3","owner":"1","#
                + #""secret":"aaaaaaaaa3","server":"000000","farm":0,"title":"Zoë at the beach","ispublic":1,"isfriend":0,"isfamily":0,"#
                + #""ownername":"alice","o_width":"1600","o_height":"1200","#
                + #""url_t":"http://h/iReporter/photos/000000/3_aaaaaaaaa3_t.jpg","height_t":75,"width_t":100,"#
                + #""url_o":"http://h/iReporter/photos/000000/3_aaaaaaaaa3_o.jpg","height_o":1200,"width_o":1600}]},"stat":"ok"}"#)
    }

    @Test func dateUploadAndOriginalDimensionsInFlickrsShape() throws {
        let phone = try phone()
        _ = try phone.photos.add(userID: 1, title: Array("zoe again".utf8),
                                 details: PhotoDetails(created: 1_700_000_000, width: 4032, height: 3024),
                                 secret: PhotoSecret("bbbbbbbbb5"), publish: { _, _ in }, unpublish: { _ in })
        _ = try phone.photos.add(userID: 1, title: Array("zoe of 2012".utf8), details: nil, secret: PhotoSecret("cccccccccc"),
                                 publish: { _, _ in }, unpublish: { _ in })
        let answer = call(phone, ["method": "flickr.photos.search", "text": "zoe", "format": "json", "nojsoncallback": "1",
                                  "extras": "o_dims, owner_name,date_upload"])
        #expect(answer.body == #"{"photos":{"page":1,"pages":1,"perpage":100,"total":3,"photo":[{"id":"6","owner":"1","#
                + #""secret":"cccccccccc","server":"000000","farm":0,"title":"zoe of 2012","ispublic":1,"isfriend":0,"#
                + #""isfamily":0,"ownername":"alice"},"#
                + #"{"id":"5","owner":"1","secret":"bbbbbbbbb5","server":"000000","farm":0,"title":"zoe again","ispublic":1,"#
                + #""isfriend":0,"isfamily":0,"dateupload":"1700000000","ownername":"alice","o_width":"4032","o_height":"3024"},"#
                + #"{"id":"3","owner":"1","secret":"aaaaaaaaa3","server":"000000","farm":0,"title":"Zoë at the beach","#
                + #""ispublic":1,"isfriend":0,"isfamily":0,"dateupload":"1","ownername":"alice","o_width":"1600","o_height":"1200"}]},"#
                + #""stat":"ok"}"#,
                "strings, as Flickr's; left out where the upload's time and size were not kept (before migration 003)")
    }

    @Test func aListAskedAgainIsTheSameAnswerUntilSomethingChanges() throws {
        var policy = AppHarness.cheapPolicy
        policy.searchCacheMillis = 60_000
        let phone = try AppHarness(policy: policy)
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        _ = try phone.photos.add(userID: 1, title: Array("sunset".utf8), publish: { _ in }, unpublish: { _ in })
        let api = FlickrAPI(services: phone.services)
        func search(_ extra: [String: String] = [:]) -> String {
            let parameters = ["method": "flickr.photos.search", "text": "sunset", "format": "json", "nojsoncallback": "1"]
                .merging(extra) { $1 }
            return String(decoding: api.handle(parameters.mapValues { Array($0.utf8) }, oauthConsumerKey: nil,
                                               siteURL: Self.siteURL).body, as: UTF8.self)
        }
        #expect(search().contains(#""total":1,"#))
        _ = try phone.photos.add(userID: 1, title: Array("sunset again".utf8), publish: { _ in }, unpublish: { _ in })
        #expect(search().contains(#""total":1,"#), "kept: nothing went through the installation")
        #expect(search(["api_key": "another", "oauth_nonce": "x"]).contains(#""total":1,"#), "the key is not the question")
        #expect(search(["pad": String(repeating: "x", count: 1000)]).contains(#""total":1,"#),
                "a parameter no list reads is not the question (nor a key of its size in the cache)")
        #expect(search(["per_page": "10"]).contains(#""total":2,"#), "another question")
        // Tags (comma-separated) are title words too, and a question of their own.
        #expect(search(["text": "", "tags": "sunset,again", "tag_mode": "all"]).contains(#""total":1,"#))
        #expect(search(["text": "", "tags": "sunset,again"]).contains(#""total":2,"#), "any of them: Flickr's default")
        #expect(search(["text": "", "tags": "sunset"]).contains(#""total":2,"#))
        phone.counters.bumpStreamGeneration() // what an upload through any worker does
        #expect(search().contains(#""total":2,"#))
        #expect(call(phone, keys: ["k"], ["method": "flickr.photos.search", "text": "sunset"]).body.contains(#"code="100""#),
                "a kept answer is no way around the operator's keys")
    }

    @Test func restXMLIsTheDefaultAndEscapes() throws {
        let answer = call(try phone(), ["method": "flickr.photos.getRecent", "per_page": "1"])
        #expect(answer.contentType == "text/xml; charset=utf-8")
        #expect(answer.body == """
            <?xml version="1.0" encoding="utf-8" ?>
            <rsp stat="ok">
            \t<photos page="1" pages="3" perpage="1" total="3">
            \t\t<photo id="4" owner="1" secret="aaaaaaaaa4" server="000000" farm="0" title="東京タワー" ispublic="1" isfriend="0" isfamily="0" />
            \t</photos>
            </rsp>

            """)
        let escaped = call(try phone(), ["method": "flickr.photos.getInfo", "photo_id": "2"]).body
        #expect(escaped.contains("<title>Sunset &lt;b&gt;&amp;&lt;/b&gt;</title>"))
    }

    @Test func jsonpWithTheDefaultOrAGivenCallbackAndNoScriptInIt() throws {
        let phone = try phone()
        let recent = call(phone, ["method": "flickr.photos.getInfo", "photo_id": "2", "format": "json"])
        #expect(recent.contentType == "text/javascript; charset=utf-8")
        #expect(recent.body.hasPrefix(#"jsonFlickrApi({"photo":{"id":"2","#))
        #expect(recent.body.contains(#""title":{"_content":"Sunset \u003cb\u003e\u0026\u003c\/b\u003e"}"#)
                || recent.body.contains(#""title":{"_content":"Sunset \u003cb\u003e\u0026\u003c/b\u003e"}"#),
                "no </script> can close the page's script")
        #expect(recent.body.hasSuffix(#","stat":"ok"})"#))
        #expect(call(phone, ["method": "flickr.test.echo", "format": "json", "jsoncallback": "app.cb_1"]).body
                .hasPrefix("app.cb_1({"))
        // nojsoncallback as Flickr reads it: any value but empty and 0 (clients send `true`).
        for flag in ["1", "true", "yes"] {
            #expect(call(phone, ["method": "flickr.test.echo", "format": "json", "nojsoncallback": flag]).body.hasPrefix(#"{"format":"#))
        }
        for flag in ["0", ""] {
            #expect(call(phone, ["method": "flickr.test.echo", "format": "json", "nojsoncallback": flag]).body.hasPrefix("jsonFlickrApi({"))
        }
        for named in ["jQuery19102_1700000000", "window.flickrCallback", "$.cb", "_"] {
            #expect(call(phone, ["method": "flickr.test.echo", "format": "json", "jsoncallback": named]).body.hasPrefix("\(named)({"))
        }
        for hostile in ["alert(1);x", "a b", "<script>", "1abc", "a..b", "", String(repeating: "a", count: 65),
                        // plain names that run our answer's text, or any text, as code:
                        "eval", "document.write", "document.writeln", "x.constructor.constructor", "constructor", "Function",
                        "setTimeout", "window.setInterval", "alert", "top.location.assign", "location.replace", "window.open",
                        "a.__proto__.b", "x.call", "Function.prototype.apply", "self.importScripts", "parent.postMessage"] {
            let answer = call(phone, ["method": "flickr.test.echo", "format": "json", "jsoncallback": hostile])
            #expect(answer.contentType == "application/json; charset=utf-8", "\(hostile)")
            #expect(answer.body == #"{"stat":"fail","code":111,"message":"jsoncallback must be a JavaScript name (letters, digits, _ and $; "#
                    + #"dots between names), none of them one that runs code (eval, Function, constructor, setTimeout, write, ...)"}"#,
                    "\(hostile)")
        }
    }

    @Test func getInfoInFlickrsShapeWithOurCommentsAndFlickrsDefaults() throws {
        let phone = try phone()
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "first")])
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "second")])
        let newest = try phone.photos.comments(photoID: 2, page: PageCursor(count: 1))[0].created
        let info = call(phone, ["method": "flickr.photos.getInfo", "photo_id": "2", "format": "json", "nojsoncallback": "1"]).body
        #expect(info == #"{"photo":{"id":"2","secret":"aaaaaaaaa2","server":"000000","farm":0,"dateuploaded":"1","isfavorite":0,"#
                + #""license":"0","safety_level":"0","rotation":0,"originalsecret":"aaaaaaaaa2","originalformat":"jpg","views":"0","#
                + #""media":"photo","owner":{"nsid":"1","username":"alice","realname":"","location":"","iconserver":"0","iconfarm":0,"#
                + #""path_alias":null},"title":{"_content":"Sunset \u003cb\u003e\u0026\u003c/b\u003e"},"description":{"_content":""},"#
                + #""visibility":{"ispublic":1,"isfriend":0,"isfamily":0},"dates":{"posted":"1","taken":"1970-01-01 00:00:01","#
                + #""takengranularity":"0","takenunknown":"1","lastupdate":"\#(newest)"},"editability":{"cancomment":0,"canaddmeta":0},"#
                + #""publiceditability":{"cancomment":1,"canaddmeta":0},"#
                + #""usage":{"candownload":1,"canblog":0,"canprint":0,"canshare":1},"comments":{"_content":"2"},"notes":{"note":[]},"#
                + #""people":{"haspeople":0},"tags":{"tag":[]},"#
                + #""urls":{"url":[{"type":"photopage","_content":"http://h/#/photo/2"}]}},"stat":"ok"}"#, "\(info)")
        let xml = call(phone, ["method": "flickr.photos.getInfo", "photo_id": "3"]).body
        for part in [#"<photo id="3" secret="aaaaaaaaa3" server="000000" farm="0" dateuploaded="1" isfavorite="0" license="0" "#,
                     #"<owner nsid="1" username="alice" realname="" location="" iconserver="0" iconfarm="0" path_alias="" />"#,
                     "<comments>0</comments>", "<notes />", "<tags />", #"<usage candownload="1" canblog="0" canprint="0" canshare="1" />"#,
                     #"<url type="photopage">http://h/#/photo/3</url>"#] {
            #expect(xml.contains(part), "\(part) in \(xml)")
        }
    }

    @Test func peopleGetInfoIsOurAccountAsAFlickrPerson() throws {
        let phone = try phone()
        try phone.send([("command", "register"), ("username", "bob"), ("password", "p")])
        _ = try phone.photos.add(userID: 1, title: Array("later".utf8), details: PhotoDetails(created: 1_700_000_000, width: 1, height: 1),
                                 publish: { _ in }, unpublish: { _ in })
        let plain = ["format": "json", "nojsoncallback": "1", "method": "flickr.people.getInfo"]
        func person(_ id: String) -> String { call(phone, plain.merging(["user_id": id]) { $1 }).body }
        #expect(person("1") == #"{"person":{"id":"1","nsid":"1","ispro":0,"is_deleted":0,"iconserver":"0","iconfarm":0,"path_alias":null,"#
                + #""has_stats":0,"username":{"_content":"alice"},"realname":{"_content":""},"location":{"_content":""},"#
                + #""description":{"_content":""},"photosurl":{"_content":"http://h/#/user/1"},"profileurl":{"_content":"http://h/#/user/1"},"#
                + #""mobileurl":{"_content":"http://h/#/user/1"},"photos":{"firstdatetaken":{"_content":"1970-01-01 00:00:01"},"#
                + #""firstdate":{"_content":"1"},"count":{"_content":4}}},"stat":"ok"}"#, "\(person("1"))")
        #expect(person("2").contains(#""username":{"_content":"bob"}"#) && person("2").contains(
            #""photos":{"firstdatetaken":{"_content":""},"firstdate":{"_content":""},"count":{"_content":0}}"#), "no photos yet")
        for unknown in ["3", "12037949754@N01", "", "-1"] {
            #expect(person(unknown) == #"{"stat":"fail","code":1,"message":"User not found"}"#, "\(unknown)")
        }
        let xml = call(phone, ["method": "flickr.people.getInfo", "user_id": "1"]).body
        #expect(xml.contains("<username>alice</username>") && xml.contains("<count>4</count>") && xml.contains(#"path_alias="""#))
    }

    @Test func everyExtraFlickrClientsAskForInFlickrsOrderAndTypes() throws {
        let phone = try phone()
        let all = "url_o, media,path_alias,geo,o_dims,machine_tags,tags,views,original_format,icon_server,owner_name,date_taken,"
            + "last_update,date_upload,description,license,no_such_extra"
        let answer = call(phone, ["method": "flickr.photos.search", "text": "zoe", "format": "json", "nojsoncallback": "1", "extras": all])
        #expect(answer.body == #"{"photos":{"page":1,"pages":1,"perpage":100,"total":1,"photo":[{"id":"3","owner":"1","#
                + #""secret":"aaaaaaaaa3","server":"000000","farm":0,"title":"Zoë at the beach","ispublic":1,"isfriend":0,"isfamily":0,"#
                + #""license":"0","dateupload":"1","lastupdate":"1","datetaken":"1970-01-01 00:00:01","datetakengranularity":0,"#
                + #""datetakenunknown":"1","ownername":"alice","iconserver":"0","iconfarm":0,"originalsecret":"aaaaaaaaa3","#
                + #""originalformat":"jpg","views":"0","tags":"","machine_tags":"","o_width":"1600","o_height":"1200","#
                + #""latitude":0,"longitude":0,"accuracy":0,"context":0,"pathalias":null,"media":"photo","media_status":"ready","#
                + #""url_o":"http://h/iReporter/photos/000000/3_aaaaaaaaa3_o.jpg","height_o":1200,"width_o":1600,"#
                + #""description":{"_content":""}}]},"stat":"ok"}"#, "\(answer.body)")
        let xml = call(phone, ["method": "flickr.photos.getRecent", "per_page": "1", "extras": "description,license"]).body
        #expect(xml.contains(#"isfamily="0" license="0">"# + "\n\t\t\t<description></description>\n\t\t</photo>"), "\(xml)")
    }

    /// Where the answers' absolute URLs point: `public_url`, else the web
    /// server's name for the site, never the request's Host.
    @Test func theSiteURLIsTheConfiguredAddressNotTheHostHeader() {
        func site(_ params: [String: String], publicURL: String = "") -> String {
            FlickrResponder.siteURL(ParameterRequest(params), publicURL: publicURL)
        }
        let hostile = ["HTTP_HOST": "evil.example", "SERVER_PORT": "8080", "SERVER_ADDR": "127.0.0.1"]
        #expect(site(hostile.merging(["SERVER_NAME": "photos.example.com"]) { $1 }) == "http://photos.example.com:8080/iReporter/")
        #expect(site(hostile.merging(["SERVER_NAME": "photos.example.com"]) { $1 }, publicURL: "https://photos.example.com/")
                == "https://photos.example.com/iReporter/")
        #expect(site(hostile.merging(["SERVER_NAME": "_"]) { $1 }) == "http://127.0.0.1:8080/iReporter/", "nginx's catch-all")
        #expect(site(hostile.merging(["SERVER_NAME": "*.example.com", "SERVER_ADDR": "::1"]) { $1 }) == "http://[::1]:8080/iReporter/")
        #expect(site(["HTTP_HOST": "evil.example", "SERVER_NAME": "a/b@evil.example", "HTTPS": "on", "SERVER_PORT": "443"])
                == "https://localhost/iReporter/")
        #expect(site(["SERVER_NAME": "example.com", "SERVER_PORT": "80"]) == "http://example.com/iReporter/")
        #expect(!site(hostile).contains("evil"))
    }

    @Test func flickrsErrorCodes() throws {
        let phone = try phone()
        let json = ["format": "json", "nojsoncallback": "1"]
        func error(_ parameters: [String: String]) -> String { call(phone, parameters.merging(json) { a, _ in a }).body }
        #expect(error(["method": "flickr.photos.delete"]) == #"{"stat":"fail","code":112,"message":"Method \"flickr.photos.delete\" not found"}"#)
        #expect(error(["method": "flickr.photos.getInfo"]) == #"{"stat":"fail","code":1,"message":"Photo not found"}"#)
        #expect(error(["method": "flickr.photos.getInfo", "photo_id": "99"]) == #"{"stat":"fail","code":1,"message":"Photo not found"}"#)
        #expect(error(["method": "flickr.photos.getSizes", "photo_id": "../2"]) == #"{"stat":"fail","code":1,"message":"Photo not found"}"#)
        #expect(error(["method": "flickr.photos.search"]).contains(#""code":3,"#))
        #expect(error(["method": "flickr.photos.search", "text": "+-\"*@"]).contains(#""code":3,"#), "operators are no words")
        for user in ["12037949754@N01", "99"] { // a number that is no account's too
            #expect(error(["method": "flickr.photos.search", "user_id": user, "text": "x"]) == #"{"stat":"fail","code":2,"message":"Unknown user"}"#)
        }
        // Flickr's codes for getPublicPhotos: 1, User not found (a number that is no account too).
        for user in ["12037949754@N01", "99"] {
            #expect(error(["method": "flickr.people.getPublicPhotos", "user_id": user]) == #"{"stat":"fail","code":1,"message":"User not found"}"#)
        }
        #expect(call(phone, ["method": "x", "format": "php_serial"]).body.contains(#"<err code="111" msg="Format &quot;phpserial&quot; not found" />"#))
        #expect(call(phone, ["method": "flickr.photos.getInfo"]).body.contains(#"<rsp stat="fail">"#))
    }

    @Test func pagingIsBroughtIntoRangeAsFlickrDoes() throws {
        let phone = try phone()
        let huge = call(phone, ["method": "flickr.photos.getRecent", "per_page": "100000", "page": "-1", "format": "json", "nojsoncallback": "1"])
        #expect(huge.body.hasPrefix(#"{"photos":{"page":1,"pages":1,"perpage":500,"total":3,"photo":[{"id":"4""#))
        let longer = call(phone, ["method": "flickr.photos.getRecent", "per_page": String(repeating: "9", count: 30), "format": "json",
                                  "nojsoncallback": "1"])
        #expect(longer.body.hasPrefix(#"{"photos":{"page":1,"pages":1,"perpage":500,"#), "too long to read, still a number")
        let far = call(phone, ["method": "flickr.photos.getRecent", "per_page": "2", "page": "2", "format": "json", "nojsoncallback": "1"])
        #expect(far.body.hasPrefix(#"{"photos":{"page":2,"pages":2,"perpage":2,"total":3,"photo":[{"id":"2""#))
        let past = call(phone, ["method": "flickr.photos.search", "text": "sunset", "page": "9999", "format": "json", "nojsoncallback": "1"])
        #expect(past.body == #"{"photos":{"page":9999,"pages":1,"perpage":100,"total":1,"photo":[]},"stat":"ok"}"#)
        let farthest = call(phone, ["method": "flickr.photos.search", "text": "sunset", "page": "1000000", "format": "json", "nojsoncallback": "1"])
        #expect(farthest.body.hasPrefix(#"{"photos":{"page":100001,"#), "one past the farthest page of an account's list: empty")
    }

    /// A search reaches 4,000 photos, as Flickr's; an account's list
    /// (`people.getPhotos`, a `user_id` without words, within upload dates
    /// or not) reaches all of them, as backup tools walk it.
    @Test func anAccountsListReachesPastASearchs() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        for index in 0..<(FlickrAPI.maxResults + 10) {
            _ = try phone.photos.add(userID: 1, title: Array("photo \(index)".utf8), details: PhotoDetails(created: 1, width: 1, height: 1),
                                     secret: nil, publish: { _, _ in }, unpublish: { _ in })
        }
        func list(_ parameters: [String: String]) -> String {
            call(phone, parameters.merging(["per_page": "500", "format": "json", "nojsoncallback": "1"]) { $1 }).body
        }
        let last = list(["method": "flickr.people.getPhotos", "user_id": "1", "page": "9"])
        #expect(last.hasPrefix(#"{"photos":{"page":9,"pages":9,"perpage":500,"total":4010,"photo":[{"id":"11","#), "\(last.prefix(100))")
        #expect(last.components(separatedBy: #"{"id":""#).count - 1 == 10)
        #expect(list(["method": "flickr.people.getPublicPhotos", "user_id": "1", "page": "9"]) == last)
        #expect(list(["method": "flickr.photos.search", "user_id": "1", "sort": "date-posted-asc", "page": "9"])
                .hasPrefix(#"{"photos":{"page":9,"pages":9,"perpage":500,"total":4010,"photo":[{"id":"4002","#))
        #expect(list(["method": "flickr.photos.search", "text": "photo", "page": "9"])
                == #"{"photos":{"page":9,"pages":8,"perpage":500,"total":4000,"photo":[]},"stat":"ok"}"#, "a search's reach")
        #expect(list(["method": "flickr.people.getPhotos", "user_id": "1", "min_upload_date": "1", "page": "9"]) == last,
                "within upload dates too: an incremental backup's call")
        #expect(list(["method": "flickr.photos.search", "min_upload_date": "1", "page": "9"])
                == #"{"photos":{"page":9,"pages":8,"perpage":500,"total":4000,"photo":[]},"stat":"ok"}"#, "dates alone: a search's reach")
    }

    /// Relevance ranks the newest `relevanceWindow` matches: `total` and
    /// `pages` promise no page beyond them (a client walking the pages
    /// would meet empty ones and stop short).
    @Test func relevancePagesEndWhereItsWindowEnds() throws {
        let phone = try AppHarness()
        try phone.send([("command", "register"), ("username", "alice"), ("password", "p")])
        for index in 0..<(PhotoSearchQuery.relevanceWindow + 10) {
            _ = try phone.photos.add(userID: 1, title: Array("photo \(index)".utf8), publish: { _ in }, unpublish: { _ in })
        }
        let list = ["method": "flickr.photos.search", "text": "photo", "per_page": "100", "format": "json", "nojsoncallback": "1"]
        #expect(call(phone, list).body.hasPrefix(#"{"photos":{"page":1,"pages":6,"perpage":100,"total":510,"#))
        let relevant = list.merging(["sort": "relevance", "page": "5"]) { $1 }
        #expect(call(phone, relevant).body.hasPrefix(#"{"photos":{"page":5,"pages":5,"perpage":100,"total":500,"photo":[{"#))
    }

    /// `sort=date-posted-asc` (and `date-taken-asc`): oldest first, as a
    /// sync tool pages from its checkpoint; the other lists have no `sort`.
    @Test func oldestFirstAsSyncToolsPage() throws {
        let phone = try phone()
        let ids = { (parameters: [String: String]) -> [String] in
            let body = self.call(phone, parameters.merging(["format": "json", "nojsoncallback": "1"]) { $1 }).body
            return body.split(separator: "{\"id\":\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        }
        let search = ["method": "flickr.photos.search", "user_id": "1"]
        #expect(ids(search) == ["4", "3", "2"])
        #expect(ids(search.merging(["sort": "date-posted-asc"]) { $1 }) == ["2", "3", "4"])
        #expect(ids(search.merging(["sort": "date-taken-asc", "per_page": "2", "page": "2"]) { $1 }) == ["4"])
        #expect(ids(search.merging(["sort": "date-posted-asc", "min_upload_date": "1"]) { $1 }) == ["2", "3", "4"], "a span")
        #expect(ids(search.merging(["sort": "interestingness-desc"]) { $1 }) == ["4", "3", "2"], "not kept: newest")
        _ = try phone.photos.add(userID: 1, title: Array("sunset again".utf8), publish: { _ in }, unpublish: { _ in })
        #expect(ids(["method": "flickr.photos.search", "text": "sunset", "sort": "date-posted-asc"]) == ["2", "5"], "with words")
        #expect(ids(["method": "flickr.photos.search", "tags": "sunset,beach", "sort": "date-posted-asc", "per_page": "2"])
                == ["2", "3"], "tags joined")
        #expect(ids(["method": "flickr.people.getPhotos", "user_id": "1", "sort": "date-posted-asc"]) == ["5", "4", "3", "2"],
                "Flickr's people.getPhotos has no sort")
        #expect(ids(["method": "flickr.photos.getRecent", "sort": "date-posted-asc"]) == ["5", "4", "3", "2"], "nor getRecent")
        #expect(call(phone, ["method": "flickr.photos.search", "user_id": "1", "sort": "date-posted-asc", "per_page": "3", "page": "2",
                             "format": "json", "nojsoncallback": "1"]).body
                .hasPrefix(#"{"photos":{"page":2,"pages":2,"perpage":3,"total":4,"photo":[{"id":"5","#), "the newest on the last page")
    }

    /// Words' indexes are read newest first: every match is read and
    /// turned around, up to what a list reaches (4,000), the tags of
    /// `tag_mode=any` each and together; past it the answer says so.
    @Test(arguments: [(["sunset": 4000], "sunset", #"{"photos":{"page":8,"pages":8,"perpage":500,"total":4000,"photo":[{"id":"3501""#),
                      (["sunset": 4001], "sunset", "refused"),
                      (["sunset": 3000, "beach": 1000], "sunset,beach", #"{"photos":{"page":8,"pages":8,"perpage":500,"total":4000,"#),
                      (["sunset": 5000, "beach": 0], "sunset,beach", "refused"),
                      (["sunset": 3000, "beach": 1001], "sunset,beach", "refused")])
    func oldestFirstWithWordsEndsAtAListsReach(matches: [String: Int], tags: String, answer: String) throws {
        /// `matches[word]` photos for each word, the first word's IdPhotos
        /// 1 and up, the next word's after them.
        final class Counted: PhotoSearch {
            let matches: [(word: [UInt8], count: Int)]
            init(_ matches: [String: Int]) { self.matches = matches.sorted { $0.key > $1.key }.map { (Array($0.key.utf8), $0.value) } }
            private func range(of terms: [[UInt8]]) -> ClosedRange<Int64>? {
                var first: Int64 = 1
                for (word, count) in matches {
                    if terms == [word] { return count == 0 ? nil : first...(first + Int64(count) - 1) }
                    first += Int64(count)
                }
                return nil
            }
            func newestMatches(terms: [[UInt8]], scope: PhotoScope, before: Int64?, limit: Int) throws -> [PhotoRecord] {
                guard let range = range(of: terms) else { return [] }
                return range.reversed().prefix(limit).map { PhotoRecord(id: $0, title: terms[0], userID: 1, username: Array("a".utf8)) }
            }
            func photos(in scope: PhotoScope, oldestFirst: Bool, offset: Int, limit: Int) throws -> [PhotoRecord] { [] }
            func countMatches(terms: [[UInt8]], scope: PhotoScope, cap: Int) throws -> Int { min(cap, range(of: terms)?.count ?? 0) }
            func wholeWordCounts(photoIDs: [Int64], terms: [[UInt8]]) throws -> [Int64: Int] { [:] }
        }
        let phone = try phone()
        var services = phone.services
        services.search = Counted(matches)
        let body = String(decoding: FlickrAPI(services: services).handle(
            ["method": Array("flickr.photos.search".utf8), "tags": Array(tags.utf8), "sort": Array("date-posted-asc".utf8),
             "per_page": Array("500".utf8), "page": Array("8".utf8), "format": Array("json".utf8), "nojsoncallback": Array("1".utf8)],
            oauthConsumerKey: nil, siteURL: Self.siteURL).body, as: UTF8.self)
        if answer == "refused" {
            #expect(body == #"{"stat":"fail","code":3,"message":"Oldest first is answered when at "#
                    + #"most 4000 photos match: give more words, a user_id or upload dates"}"#)
        } else {
            #expect(body.hasPrefix(answer), "\(body.prefix(200))")
            #expect(body.components(separatedBy: #"{"id":""#).last?.hasPrefix(#"4000""#) == true, "the newest last")
        }
    }

    /// Dates as Python's Flickr clients send them (`str()` of a float or a
    /// datetime, `isoformat()`): each a bound, none silently dropped.
    @Test(arguments: [("1000", Int64?(1000)), ("1700000000.123", 1_700_000_000), ("1970-01-01", 0),
                      ("1970-01-01 00:16:40", 1000), ("1970-01-01 00:16:40.250000", 1000), ("1970-01-01T00:16:40", 1000),
                      ("1970-01-01 00:16", 960), ("1970-01-01T00:16:40Z", 1000), ("1970-01-01 00:16:40+00:00", 1000),
                      ("1970-01-01T01:16:40+01:00", 1000), ("1970-01-01T00:16:40-0130", 6400), ("1970-1-1 0:16:40", 1000),
                      ("next tuesday", nil), ("1.2.3", nil), (".5", nil), ("1970-01-01 00:16:40 +00:00", nil),
                      ("1970-01-01T", nil), ("1970-01-01 25:00", nil), ("1970-01-01T00:16+24:00", nil), ("19700-01-01", nil),
                      ("1970-01-01 00:16:40.", nil), ("1969-12-31", nil)])
    func uploadDatesInTheFormsClientsSend(_ date: String, _ seconds: Int64?) {
        let call = FlickrCall(parameters: ["min_upload_date": Array(date.utf8)], siteURL: "http://h/iReporter/")
        #expect(call.uploadDate("min_upload_date") == seconds, "\(date)")
    }

    /// Clients that build themselves from reflection (node-flickrapi) ask
    /// `getMethodInfo` of every method `getMethods` lists.
    @Test func everyMethodListedIsDescribed() throws {
        let phone = try phone()
        let plain = ["format": "json", "nojsoncallback": "1"]
        let listed = try JSONParser.parse(Array(call(phone, plain.merging(["method": "flickr.reflection.getMethods"]) { $1 }).body.utf8))
        guard case .array(let methods)? = listed["methods"]?["method"] else { Issue.record("no list"); return }
        #expect(methods.count == FlickrMethod.allCases.count)
        for method in methods {
            guard case .string(let bytes)? = method["_content"] else { continue }
            let name = String(decoding: bytes, as: UTF8.self)
            let info = try JSONParser.parse(Array(call(phone, plain.merging(["method": "flickr.reflection.getMethodInfo",
                                                                             "method_name": name]) { $1 }).body.utf8))
            #expect(info["stat"] == JSONValue.string(Array("ok".utf8)) && info["method"]?["name"] == JSONValue.string(bytes), "\(name)")
            guard case .array(let arguments)? = info["arguments"]?["argument"] else { Issue.record("\(name): no arguments"); continue }
            #expect(arguments.first?["name"] == JSONValue.string(Array("api_key".utf8)))
        }
        let search = call(phone, plain.merging(["method": "flickr.reflection.getMethodInfo", "method_name": "flickr.photos.search"]) { $1 }).body
        #expect(search.contains(#"{"name":"tag_mode","optional":"1","_content":"#), "\(search)")
        #expect(search.contains(#"{"code":"2","message":"Unknown user","_content":"Unknown user"}"#))
        #expect(search.contains(#"{"code":100,"message":"Invalid API Key (Key not found)","#))
        #expect(call(phone, plain.merging(["method": "flickr.reflection.getMethodInfo", "method_name": "flickr.photos.getContext"]) { $1 }).body
                == #"{"stat":"fail","code":1,"message":"Method not found"}"#)
    }

    /// `tag_mode=any` (Flickr's default): the photos of any of the tags,
    /// newest first, each once, counted once; `all`: of every tag.
    @Test func anyTagFindsThePhotosOfEachAllTagsThoseOfEvery() throws {
        let phone = try phone()
        _ = try phone.photos.add(userID: 1, title: Array("sunset at the beach".utf8), publish: { _ in }, unpublish: { _ in })
        let plain = ["method": "flickr.photos.search", "format": "json", "nojsoncallback": "1"]
        /// "total: id,id,…".
        func ids(_ parameters: [String: String]) throws -> String {
            let answer = try JSONParser.parse(Array(call(phone, plain.merging(parameters) { $1 }).body.utf8))
            guard case .array(let photos)? = answer["photos"]?["photo"], case .number(let total)? = answer["photos"]?["total"] else {
                return "no list"
            }
            let ids = photos.compactMap { photo -> String? in
                if case .string(let id)? = photo["id"] { String(decoding: id, as: UTF8.self) } else { nil }
            }
            return String(decoding: total, as: UTF8.self) + ": " + ids.joined(separator: ",")
        }
        #expect(try ids(["tags": "sunset,東京"]) == "3: 5,4,2")
        #expect(try ids(["tags": "sunset, 東京,beach"]) == "4: 5,4,3,2", "the sunset at the beach once")
        #expect(try ids(["tags": "sunset,beach", "tag_mode": "all"]) == "1: 5")
        #expect(try ids(["tags": "sunset,東京", "per_page": "2", "page": "2"]) == "3: 2")
        #expect(try ids(["tags": "sunset,東京", "text": "zoë"]) == "0: ", "the text with each tag")
        #expect(try ids(["tags": "-x,東京"]) == "1: 4", "a tag of no word is none")
    }

    /// Flickr takes a sentence: past six terms, the longest six are searched.
    @Test func aTextOfMoreThanSixWordsIsSearchedByItsLongest() throws {
        let phone = try phone()
        _ = try phone.photos.add(userID: 1, title: Array("the quick brown fox jumps over the lazy dog".utf8), publish: { _ in },
                                 unpublish: { _ in })
        let search = ["method": "flickr.photos.search", "format": "json", "nojsoncallback": "1"]
        let sentence = call(phone, search.merging(["text": "a quick brown fox jumps over the lazy dog"]) { $1 }).body
        #expect(sentence.contains(#""total":1,"photo":[{"id":"5""#), "\(sentence)")
        #expect(FlickrCall.searched(["a", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog"].map { Array($0.utf8) })
                == ["quick", "brown", "fox", "jumps", "over", "lazy"].map { Array($0.utf8) }, "the longest, in the text's order")
        let japanese = call(phone, search.merging(["text": "東京タワーの夜景がきれいです"]) { $1 }).body
        #expect(japanese.hasPrefix(#"{"photos":{"page":1,"#), "seven pairs of characters: \(japanese)")
    }

    /// A date of spaces alone split into nothing, and its first part was read (a trap).
    @Test func anUploadDateOfSpacesIsIgnored() throws {
        let phone = try phone()
        for date in [" ", "   "] {
            let answer = call(phone, ["method": "flickr.photos.search", "text": "zoe", "min_upload_date": date, "max_upload_date": date,
                                      "format": "json", "nojsoncallback": "1"])
            #expect(answer.body.hasPrefix(#"{"photos":{"page":1,"pages":1,"perpage":100,"total":1,"#))
        }
    }

    @Test func apiKeysFromAListWhenTheOperatorSetsOne() throws {
        let phone = try phone()
        let echo = ["method": "flickr.test.echo", "format": "json", "nojsoncallback": "1"]
        #expect(call(phone, echo).body.contains(#""stat":"ok""#), "any key, or none, by default")
        #expect(call(phone, keys: ["k1"], echo).body == #"{"stat":"fail","code":100,"message":"Invalid API Key (Key not found)"}"#)
        #expect(call(phone, keys: ["k1"], echo.merging(["api_key": "k2"]) { a, _ in a }).body.contains(#""code":100"#))
        #expect(call(phone, keys: ["k1"], echo.merging(["api_key": "k1"]) { a, _ in a }).body
                == #"{"api_key":{"_content":"k1"},"format":{"_content":"json"},"method":{"_content":"flickr.test.echo"},"#
                + #""nojsoncallback":{"_content":"1"},"stat":"ok"}"#)
        #expect(call(phone, keys: ["k1"], key: "k1", echo).body.contains(#""stat":"ok""#), "an OAuth-signed request's consumer key")
        #expect(call(phone, echo.merging(["stat": "x"]) { a, _ in a }).body
                == #"{"format":{"_content":"json"},"method":{"_content":"flickr.test.echo"},"nojsoncallback":{"_content":"1"},"stat":"ok"}"#,
                "one stat: the answer's")
    }

    @Test func methodsSizesAndComments() throws {
        let phone = try phone()
        let plain = ["format": "json", "nojsoncallback": "1"]
        func body(_ parameters: [String: String]) -> String { call(phone, parameters.merging(plain) { a, _ in a }).body }
        #expect(body(["method": "flickr.reflection.getMethods"]).hasPrefix(#"{"methods":{"method":[{"_content":"flickr.people.findByUsername"},"#
                + #"{"_content":"flickr.people.getInfo"},{"_content":"flickr.people.getPhotos"},{"_content":"flickr.people.getPublicPhotos"}"#))
        let sizes = body(["method": "flickr.photos.getSizes", "photo_id": "2"])
        #expect(sizes.hasPrefix(#"{"sizes":{"canblog":0,"canprint":0,"candownload":1,"size":["#
                + #"{"label":"Square","width":75,"height":75,"source":"http://h/iReporter/photos/000000/2_aaaaaaaaa2_s.jpg","#
                + #""url":"http://h/iReporter/photos/000000/2_aaaaaaaaa2_s.jpg","media":"photo"},"#
                + #"{"label":"Large Square","width":150,"height":150,"#), "\(sizes)")
        #expect(sizes.contains(#"{"label":"Medium","width":500,"height":375,"source":"http://h/iReporter/photos/000000/2_aaaaaaaaa2.jpg","#))
        #expect(sizes.hasSuffix(#"{"label":"Large","width":1024,"height":768,"source":"http://h/iReporter/photos/000000/2_aaaaaaaaa2_b.jpg","#
                + #""url":"http://h/iReporter/photos/000000/2_aaaaaaaaa2_b.jpg","media":"photo"},"#
                + #"{"label":"Original","width":1600,"height":1200,"source":"http://h/iReporter/photos/000000/2_aaaaaaaaa2_o.jpg","#
                + #""url":"http://h/iReporter/photos/000000/2_aaaaaaaaa2_o.jpg","media":"photo"}]},"stat":"ok"}"#), "\(sizes)")
        #expect(sizes.split(separator: #""label""#).count == 12, "every size below 1600x1200, and the original")
        #expect(body(["method": "flickr.photos.comments.getList", "photo_id": "3"]) == #"{"comments":{"photo_id":"3"},"stat":"ok"}"#)
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "first")])
        try phone.send([("command", "comment"), ("IdPhoto", "2"), ("text", "second <img src=x onerror=alert(1)> & \"so\"")])
        let listed = body(["method": "flickr.photos.comments.getList", "photo_id": "2"])
        #expect(listed.hasPrefix(#"{"comments":{"photo_id":"2","comment":[{"id":"1","author":"1","author_is_deleted":0,"authorname":"alice","datecreate":""#),
                "oldest first, ids and dates as strings: \(listed)")
        #expect(listed.contains(#""_content":"first"},{"id":"2","#) && listed.hasSuffix(#""_content":"second \u0026lt;img src=x onerror=alert(1)\u0026gt; \u0026amp; \u0026quot;so\u0026quot;"}]},"stat":"ok"}"#),
                "\(listed)")
        #expect(body(["method": "flickr.people.getPublicPhotos", "user_id": "1", "per_page": "1"])
                .hasPrefix(#"{"photos":{"page":1,"pages":3,"perpage":1,"total":3,"photo":[{"id":"4","owner":"1""#))
        // A client turns a typed name into a user_id (any ASCII case, as logging in), then lists the photos.
        #expect(body(["method": "flickr.people.findByUsername", "username": "ALICE"])
                == #"{"user":{"id":"1","nsid":"1","username":{"_content":"alice"}},"stat":"ok"}"#)
        #expect(body(["method": "flickr.people.findByUsername", "username": "nobody"])
                == #"{"stat":"fail","code":1,"message":"User not found"}"#)
        #expect(body(["method": "flickr.people.getPhotos", "user_id": "1", "per_page": "1"])
                .hasPrefix(#"{"photos":{"page":1,"pages":3,"perpage":1,"total":3,"photo":[{"id":"4","owner":"1""#))
        // Within the upload dates a sync tool asks for; someone unknown is Flickr's code 2 here.
        #expect(body(["method": "flickr.people.getPhotos", "user_id": "1", "min_upload_date": "2099-01-01"])
                .contains(#""total":0,"#))
        #expect(body(["method": "flickr.people.getPhotos", "user_id": "99"]) == #"{"stat":"fail","code":2,"message":"Unknown user"}"#)
        #expect(body(["method": "flickr.people.getPhotos"]) == #"{"stat":"fail","code":1,"message":"Required arguments missing"}"#)
        #expect(body(["method": "flickr.photos.search", "text": "タワー", "user_id": "1"]).contains(#""total":1,"#))
        // Flickr's exclusion is ignored, never read as a word required.
        #expect(body(["method": "flickr.photos.search", "text": "タワー -nowhere", "user_id": "1"]).contains(#""total":1,"#))
        try phone.send([("command", "register"), ("username", "bob"), ("password", "p")]) // 2, no photos
        #expect(body(["method": "flickr.photos.search", "text": "タワー", "user_id": "2"]).contains(#""total":0,"#))
    }
}

private extension String {
    /// (JSON's `\/` is not used: URLs are written as they are.)
    var replacingSlashes: String { replacing("\\/", with: "/") }
}
