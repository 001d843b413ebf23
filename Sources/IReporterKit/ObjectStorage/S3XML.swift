#if canImport(Glibc)
import Glibc
#endif

/// What the client reads of S3's XML answers (through libxml2, `ParsedXML`).
enum S3XML {
    /// One page of a ListObjectsV2 answer.
    struct ListPage: Equatable {
        var objects: [S3Client.Listed]
        /// Where the next page starts (NextContinuationToken); nil on the last page.
        var continuation: String?
    }

    /// A `<ListBucketResult>`: its objects in order, and whether more follow.
    static func listing(_ body: [UInt8]) throws(XMLError) -> ListPage {
        let document = try ParsedXML(body)
        guard let root = document.root, root.name == "ListBucketResult" else {
            throw XMLError(code: 0, message: "not a listing (<\(document.root?.name ?? "")>)")
        }
        var page = ListPage(objects: [], continuation: nil)
        for object in root.children("Contents") {
            guard let key = object.childText("Key") else { throw XMLError(code: 0, message: "an object without a <Key>") }
            page.objects.append(S3Client.Listed(key: key, modified: object.childText("LastModified").flatMap(seconds)))
        }
        if root.childText("IsTruncated") == "true" {
            guard let next = root.childText("NextContinuationToken"), !next.isEmpty else {
                throw XMLError(code: 0, message: "a truncated listing without a NextContinuationToken")
            }
            page.continuation = next
        }
        return page
    }

    /// An `<Error>` answer's Code and Message; nil when the body is not one
    /// (a HEAD's empty answer, a proxy's page).
    static func error(_ body: [UInt8]) -> (code: String, message: String)? {
        guard let root = try? ParsedXML(body).root, root.name == "Error" else { return nil }
        return (root.childText("Code") ?? "", root.childText("Message") ?? "")
    }

    /// `2026-12-01T19:40:25.000Z` (ISO 8601 in UTC, as S3 writes times) in
    /// seconds since 1970.
    static func seconds(_ time: String) -> Int? {
        let parts = time.split(whereSeparator: { "-T:.Z".contains($0) }).prefix(6).compactMap { Int($0) }
        // The store's text: a year of 20 digits must not trap Int32's conversion.
        guard parts.count == 6, (1970...9999).contains(parts[0]), (1...12).contains(parts[1]), (1...31).contains(parts[2]),
              (0...23).contains(parts[3]), (0...59).contains(parts[4]), (0...60).contains(parts[5]) else { return nil }
        var fields = tm()
        (fields.tm_year, fields.tm_mon, fields.tm_mday) = (Int32(parts[0] - 1900), Int32(parts[1] - 1), Int32(parts[2]))
        (fields.tm_hour, fields.tm_min, fields.tm_sec) = (Int32(parts[3]), Int32(parts[4]), Int32(parts[5]))
        return timegm(&fields)
    }
}
