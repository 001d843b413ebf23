import FuzzSupport
import IReporterKit

// The Flickr-compatible REST endpoint's parameters (a urlencoded query, as
// FlickrResponder reads one) through FlickrAPI on the in-memory stores
// holding a few photos and a comment: every method, format and paging must
// answer, never trap (a date of spaces did: Fuzz/Crashes/flickr); a plain
// JSON answer (`format=json` with `nojsoncallback` neither empty nor `0`)
// must be JSON, and every
// answer must say `stat` ok or fail.

nonisolated(unsafe) let flickr: FlickrAPI = {
    var policy = AppServices.Policy()
    policy.passwordHashing.memoryKiB = 64
    policy.passwordHashing.iterations = 1
    let services = try! AppServices.inMemory(policy: policy)
    guard case .created(let account) = try! services.users.register(username: Array("alice".utf8), password: Array("p".utf8))
    else { fatalError("alice is not registered") }
    let alice = account.id
    for (index, title) in ["Sunset over the pier", "Zoë at the beach", "東京タワー"].enumerated() {
        let id = try! services.photos.add(userID: alice, title: Array(title.utf8),
                                          details: PhotoDetails(created: 1_700_000_000 + Int64(index), width: 640, height: 480),
                                          secret: PhotoSecret("aaaaaaaaa\(index)"), publish: { _, _ in }, unpublish: { _ in })
        _ = try! services.comments.addComment(photoID: id, userID: alice, text: Array("nice".utf8), created: 1_700_000_100)
    }
    return FlickrAPI(services: services)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = bytes(data, size)
    let parameters = URLEncodedForm.parse(input).fields
    let response = flickr.handle(parameters, oauthConsumerKey: nil, siteURL: "http://h/iReporter/")
    let body = String(decoding: response.body, as: UTF8.self)
    check(body.contains("\"stat\":\"ok\"") || body.contains("\"stat\":\"fail\"") || body.contains("stat=\"ok\"")
          || body.contains("stat=\"fail\""), "no stat in \(show(response.body)) for \(show(input))")
    if parameters["format"] == Array("json".utf8), let flag = parameters["nojsoncallback"], !flag.isEmpty, flag != Array("0".utf8) {
        var validator = JSONValidator(response.body)
        check(validator.validate(), "not JSON: \(show(response.body)) for \(show(input))")
    }
    return 0
}
