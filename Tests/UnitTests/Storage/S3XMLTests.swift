import Testing
@testable import IReporterKit

/// S3's XML answers read through libxml2: the bodies are as AWS, MinIO and
/// moto write them; a document that is not XML, or that declares entities
/// of its own, is a clear error and never expanded.
struct S3XMLTests {
    static let truncatedPage = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <Name>ireporter-photos</Name>
            <Prefix>upload/</Prefix>
            <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
            <KeyCount>2</KeyCount>
            <MaxKeys>2</MaxKeys>
            <IsTruncated>true</IsTruncated>
            <Contents>
                <Key>upload/7.jpg</Key>
                <LastModified>2026-12-01T19:40:25.000Z</LastModified>
                <ETag>&quot;70ee1738b6b21e2c8a43f3a5ab0eee71&quot;</ETag>
                <Size>11434</Size>
                <StorageClass>STANDARD</StorageClass>
            </Contents>
            <Contents>
                <Key>upload/Tom &amp; Jerry &lt;1&gt; &#x41;&#66;.jpg</Key>
                <LastModified>1970-01-01T00:00:00.000Z</LastModified>
                <ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag>
                <Size>0</Size>
                <StorageClass>STANDARD</StorageClass>
            </Contents>
        </ListBucketResult>
        """

    @Test func aTruncatedListingGivesItsObjectsAndWhereTheNextPageStarts() throws {
        let page = try S3XML.listing(Array(Self.truncatedPage.utf8))
        #expect(page.objects == [S3Client.Listed(key: "upload/7.jpg", modified: 1_796_154_025),
                                 S3Client.Listed(key: "upload/Tom & Jerry <1> AB.jpg", modified: 0)])
        #expect(page.continuation == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
    }

    @Test func theLastPageHasNoContinuation() throws {
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix></Prefix>\
            <KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>\
            <Contents><Key><![CDATA[photos/000/000/2_0123456789_o.jpg]]></Key>\
            <LastModified>2026-12-01T19:40:25.000Z</LastModified><Size>3</Size></Contents></ListBucketResult>
            """
        let page = try S3XML.listing(Array(body.utf8))
        #expect(page == S3XML.ListPage(objects: [.init(key: "photos/000/000/2_0123456789_o.jpg", modified: 1_796_154_025)],
                                       continuation: nil))
        let empty = #"<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>false</IsTruncated></ListBucketResult>"#
        #expect(try S3XML.listing(Array(empty.utf8)) == S3XML.ListPage(objects: [], continuation: nil))
    }

    /// The repair sets aside objects without a row that are old enough: one
    /// whose age the store did not say is never taken for an old one.
    @Test func anObjectWithoutItsTimeHasNone() throws {
        let body = "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>upload/8.jpg</Key></Contents>"
            + "<Contents><Key>upload/9.jpg</Key><LastModified>Tue, 01 Dec 2026 19:40:25 GMT</LastModified></Contents></ListBucketResult>"
        #expect(try S3XML.listing(Array(body.utf8)).objects == [.init(key: "upload/8.jpg", modified: nil), .init(key: "upload/9.jpg", modified: nil)])
    }

    @Test func aTruncatedListingWithoutItsTokenIsAnError() {
        let body = "<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>a</Key></Contents></ListBucketResult>"
        #expect(throws: XMLError.self) { try S3XML.listing(Array(body.utf8)) }
    }

    @Test func anErrorAnswerGivesItsCodeAndMessage() throws {
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the \
            signature you provided. Check your key &amp; signing method.</Message><Resource>/ireporter-photos/upload/7.jpg\
            </Resource><RequestId>4442587FB7D0A2F9</RequestId></Error>
            """
        let error = try #require(S3XML.error(Array(body.utf8)))
        #expect(error.code == "SignatureDoesNotMatch")
        #expect(error.message.hasSuffix("Check your key & signing method."))
        let s3Error = S3Error(status: 403, body: Array(body.utf8), request: "PUT b/upload/7.jpg")
        #expect(s3Error.code == .status(403, code: "SignatureDoesNotMatch") && !s3Error.unreachable)
    }

    @Test func aBodyThatIsNotAnErrorDocumentIsTheStatusAlone() {
        for body in ["", "<html><body><h1>502 Bad Gateway</h1></body></html>", "<Error><Code>Half"] {
            #expect(S3XML.error(Array(body.utf8)) == nil, "\(body)")
            let error = S3Error(status: 502, body: Array(body.utf8), request: "GET b/k")
            #expect(error.code == .status(502, code: "") && error.message == "HTTP 502" && error.unreachable)
        }
    }

    @Test func malformedXMLIsLibxml2sErrorWithItsCodeAndLine() {
        let body = "<ListBucketResult>\n<Contents><Key>a</Contents></ListBucketResult>"
        #expect {
            try S3XML.listing(Array(body.utf8))
        } throws: { error in
            // XML_ERR_TAG_NAME_MISMATCH
            guard let error = error as? XMLError else { return false }
            return error.code == 76 && error.message.contains("Opening and ending tag mismatch") && error.message.contains("line 2")
        }
        #expect(throws: XMLError.self) { try S3XML.listing(Array("not xml at all".utf8)) }
        #expect(throws: XMLError.self) { try S3XML.listing(Array("<Error><Code>NoSuchBucket</Code></Error>".utf8)) }
    }

    @Test func entitiesOfTheDocumentsOwnAreNeverExpanded() {
        // A billion laughs: 10^9 "lol"s, 3 GB, from a few hundred bytes.
        var laughs = #"<?xml version="1.0"?><!DOCTYPE l [<!ENTITY l0 "lol">"#
        for level in 1...9 { laughs += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">" }
        laughs += "]><ListBucketResult><Contents><Key>&l9;</Key></Contents></ListBucketResult>"
        #expect(throws: XMLError.self) { try S3XML.listing(Array(laughs.utf8)) }
        #expect(S3XML.error(Array(laughs.replacing("ListBucketResult", with: "Error").replacing("Key", with: "Message").utf8)) == nil)
        // An external entity: not read, not fetched.
        let external = #"<?xml version="1.0"?><!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>"#
            + "<ListBucketResult><Contents><Key>&x;</Key></Contents></ListBucketResult>"
        #expect {
            try S3XML.listing(Array(external.utf8))
        } throws: { error in
            (error as? XMLError)?.message.contains("DTD") == true
        }
    }

    @Test func aDocumentOverTheBoundIsRefusedUnread() {
        #expect {
            try ParsedXML(Array("<a>0123456789</a>".utf8), maxBytes: 10)
        } throws: { error in
            (error as? XMLError)?.message.contains("at most 10") == true
        }
    }
}
