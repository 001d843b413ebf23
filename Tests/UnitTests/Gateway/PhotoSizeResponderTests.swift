import Testing
import TestSupport
@testable import IReporterKit

/// A size's first answer (the server's) and every later one (the web
/// server's, from disk) carry the same headers that keep a photo a picture.
struct PhotoSizeResponderTests {

    let scratch = ScratchDirectory("size-answers")

    /// A responder over a folder with one photo stored.
    func oneStoredPhoto() throws -> (responder: PhotoSizeResponder, id: Int64, secret: PhotoSecret) {
        let store = InMemoryPhotoStore(users: .withAlice())
        let folder = UploadFolder(directory: scratch.path)
        let secret = PhotoSecret.random()
        let spool = scratch.write(".spool-test", makeJPEG(width: 320, height: 240))
        let id = try store.add(userID: 1, title: Array("t".utf8), details: nil, secret: secret, publish: { id, secret in
            try folder.publish(photoSpool: spool, thumbnail: makeJPEG(width: 180, height: 180), id: id, secret: secret)
        }, unpublish: { folder.remove(id: $0, secret: secret) })
        let responder = PhotoSizeResponder(sizes: PhotoSizes(photos: store, files: folder, policy: AppServices.Policy(),
                                                             decodeGate: nil))
        return (responder, id, secret)
    }

    /// The head of the answer to a size rendered now, its lines by name.
    func firstAnswerHead() throws -> [(name: String, value: String)] {
        let (responder, id, secret) = try oneStoredPhoto()
        let answer = responder.answer(ParameterRequest(["REQUEST_METHOD": "GET",
                                               "REQUEST_URI": "/iReporter/" + PhotoTree.urlPath(id: id, secret: secret, size: .square75)]))
        let text = String(decoding: answer.prefix(600), as: UTF8.self)
        let end = try #require(text.firstRange(of: "\r\n\r\n"))
        return text[..<end.lowerBound].split(separator: "\r\n").map { line in
            let parts = line.split(separator: ":", maxSplits: 1)
            return (String(parts[0]), String(parts[1].drop { $0 == " " }))
        }
    }

    /// `add_header` (nginx) or `Header set` (Apache) lines of a shipped
    /// configuration, from the line that starts the photos' block on.
    func declaredHeaders(_ file: String, from start: String, until end: String) throws -> [String: String] {
        var root = #filePath
        for _ in 0..<4 { root = String(root[..<root.lastIndex(of: "/")!]) }
        let text = String(decoding: try #require(readFile("\(root)/\(file)")), as: UTF8.self)
        let lines = text.split(separator: "\n").map { String($0.drop { $0 == " " }) }
        let first = try #require(lines.firstIndex { $0.hasPrefix(start) }, "\(file): no \(start)")
        var found: [String: String] = [:]
        for line in lines[first...].prefix(while: { !$0.hasPrefix(end) }) {
            for verb in ["add_header ", "Header always set ", "Header set "] where line.hasPrefix(verb) {
                let rest = line.dropFirst(verb.count)
                let name = String(rest.prefix { $0 != " " })
                var value = rest.dropFirst(name.count + 1)
                for suffix in [";", " always", "\""] where value.hasSuffix(suffix) { value = value.dropLast(suffix.count) }
                found[name] = String(value.hasPrefix("\"") ? value.dropFirst() : value)
            }
        }
        return found
    }

    /// The folder, counting the sizes read whole.
    final class CountingReads: PhotoSizeFiles {
        let folder: UploadFolder
        var reads = 0
        var spoolDirectory: String { folder.spoolDirectory }
        init(_ folder: UploadFolder) { self.folder = folder }
        func storedSize(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws -> [UInt8]? {
            reads += 1
            return folder.storedSize(size, id: id, secret: secret)
        }
        func storedSizeLength(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws -> Int? {
            folder.storedSizeLength(size, id: id, secret: secret)
        }
        func originalInTree(id: Int64, secret: PhotoSecret) throws -> [UInt8]? { try folder.originalInTree(id: id, secret: secret) }
        func withSource<Result>(for size: PhotoSize, id: Int64, secret: PhotoSecret,
                                _ render: (String) throws -> Result) throws -> Result? {
            try folder.withSource(for: size, id: id, secret: secret, render)
        }
        func publishSize(_ jpeg: [UInt8], id: Int64, secret: PhotoSecret, size: PhotoSize) throws {
            try folder.publishSize(jpeg, id: id, secret: secret, size: size)
        }
        func removeSize(_ size: PhotoSize, id: Int64, secret: PhotoSecret) throws { try folder.removeSize(size, id: id, secret: secret) }
    }

    /// What nginx and Apache hand over as a size (they merge doubled
    /// slashes before choosing the location) is answered here, a misspelled
    /// one with a 404, never as an API command's empty 200; a POST stays the API's.
    @Test(arguments: [("GET", "/iReporter/photos/000000/2_0123abcdef_q.jpg", true),
                      ("GET", "/iReporter/photos//000000/2_0123abcdef_q.jpg", true),
                      ("HEAD", "/iReporter/photos/000000//2_0123abcdef_q.jpg?x=1", true),
                      ("GET", "/iReporter//photos/000000/2_0123abcdef_q.jpg/", true),
                      ("POST", "/iReporter/photos/000000/2_0123abcdef_q.jpg", false),
                      ("GET", "/iReporter/", false),
                      ("GET", "/iReporter/photos/2_0123abcdef_q.jpg", false),
                      // Flickr's form (deploy/nginx/flickr-host.conf).
                      ("GET", "/0/2_0123abcdef_q.jpg", true),
                      ("GET", "//0/2_0123abcdef_q.jpg", true),
                      ("GET", "/api/2_0123abcdef_q.jpg", false),
                      ("POST", "/0/2_0123abcdef_q.jpg", false)])
    func whatTheWebServerHandsOverAsASizeIsAnsweredAsOne(method: String, uri: String, handled: Bool) {
        let responder = PhotoSizeResponder(sizes: PhotoSizes(photos: InMemoryPhotoStore(users: .withAlice()),
                                                             files: UploadFolder(directory: scratch.path),
                                                             policy: AppServices.Policy(), decodeGate: nil))
        let request = ParameterRequest(["REQUEST_METHOD": method, "REQUEST_URI": uri])
        #expect(responder.handles(request) == handled)
        if handled && uri.contains("//") {
            #expect(responder.answer(request).starts(with: Array("Status: 404".utf8)))
        }
    }

    /// A HEAD by a path the web server does not serve from disk (a folder
    /// put before `photos/`) reaches the server: a size stored already is
    /// answered from its length, none of it read (an original is up to 20 MiB).
    @Test func aHEADOfAStoredSizeReadsNoneOfIt() throws {
        let store = InMemoryPhotoStore(users: .withAlice())
        let folder = UploadFolder(directory: scratch.path)
        let secret = PhotoSecret.random()
        let photo = makeJPEG(width: 320, height: 240)
        let spool = scratch.write(".spool-head", photo)
        let id = try store.add(userID: 1, title: Array("t".utf8), details: nil, secret: secret, publish: { id, secret in
            try folder.publish(photoSpool: spool, thumbnail: makeJPEG(width: 180, height: 180), id: id, secret: secret)
        }, unpublish: { folder.remove(id: $0, secret: secret) })
        let files = CountingReads(folder)
        let responder = PhotoSizeResponder(sizes: PhotoSizes(photos: store, files: files, policy: AppServices.Policy(), decodeGate: nil))
        let uri = "/iReporter/elsewhere/" + PhotoTree.urlPath(id: id, secret: secret, size: .original)
        let head = responder.answer(ParameterRequest(["REQUEST_METHOD": "HEAD", "REQUEST_URI": uri]))
        let text = String(decoding: head, as: UTF8.self)
        #expect(text.hasPrefix("Status: 200 OK\r\n") && text.contains("Content-Length: \(photo.count)\r\n") && text.hasSuffix("\r\n\r\n"),
                "\(text)")
        #expect(files.reads == 0)
        let get = responder.answer(ParameterRequest(["REQUEST_METHOD": "GET", "REQUEST_URI": uri]))
        #expect(Array(get.suffix(photo.count)) == photo)
        #expect(files.reads == 1)
    }

    /// The tutorial's client builds `/<server as a number>/<id>_<secret>_m.jpg`:
    /// nginx is sent to the size's own path (its file, or this route to
    /// make it), without a read of the photo or its row here.
    @Test func flickrsFormOfAPhotosURLSendsNginxToTheSize() throws {
        let (responder, id, secret) = try oneStoredPhoto()
        func answer(_ uri: String, decoded: String? = nil) -> String {
            var parameters = ["REQUEST_METHOD": "GET", "REQUEST_URI": uri]
            parameters["DOCUMENT_URI"] = decoded
            return String(decoding: responder.answer(ParameterRequest(parameters)), as: UTF8.self)
        }
        let size = "/iReporter/" + PhotoTree.urlPath(id: id, secret: secret, size: .small240)
        #expect(answer("/\(id / 1000)/\(id)_\(secret)_m.jpg") == "Status: 200 OK\r\nX-Accel-Redirect: \(size)\r\n\r\n")
        #expect(answer("/%30/\(id)_\(secret)_m.jpg", decoded: "/0/\(id)_\(secret)_m.jpg").contains("X-Accel-Redirect: \(size)\r\n"),
                "as nginx's location read it")
        // Sent on to make the size: the Flickr form stays its REQUEST_URI.
        #expect(responder.handles(ParameterRequest(["REQUEST_METHOD": "GET", "REQUEST_URI": "/0/x", "DOCUMENT_URI": size])))
        let made = answer("/\(id / 1000)/\(id)_\(secret)_m.jpg", decoded: size)
        #expect(made.hasPrefix("Status: 200 OK\r\nContent-Type: image/jpeg\r\n"), "\(made.prefix(200))")
        #expect(answer("/\(id / 1000 + 1)/\(id)_\(secret)_m.jpg").hasPrefix("Status: 404"), "another photo's server")
        #expect(answer("/0/\(id)_xyz_m.jpg").hasPrefix("Status: 404"))
    }

    @Test func theFirstAnswerHasTheHeadersOfTheWebServersLaterOnes() throws {
        let head = try firstAnswerHead()
        #expect(head.first?.name == "Status" && head.first?.value == "200 OK", "\(head)")
        let nginx = try declaredHeaders("deploy/nginx/ireporter.conf", from: "location ~ \"^/iReporter/photos/", until: "location @")
        #expect(Set(nginx.keys) == ["Cache-Control", "X-Content-Type-Options", "Content-Security-Policy"], "\(nginx)")
        for (name, value) in nginx {
            #expect(head.filter { $0.name == name }.map(\.value) == [value], "\(name) as nginx's file answer has it, once: \(head)")
        }
    }
}
