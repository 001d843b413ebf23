#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IReporterKit
import TestSupport

/// `forEachObject` against a store that answers every listing the same
/// truncated page (a forked child playing it on loopback).
struct S3ListingTests {
    static let page = """
        <ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>again</NextContinuationToken>\
        <Contents><Key>upload/1.jpg</Key><LastModified>2026-12-01T19:40:25.000Z</LastModified></Contents></ListBucketResult>
        """

    /// A loopback listener on a port of its own, and its port.
    static func listener() throws -> (fd: Int32, port: Int32) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 8) == 0 else { throw SystemError("listen on loopback") }
        return (fd, Int32(UInt16(bigEndian: address.sin_port)))
    }

    /// A store that says the listing goes on from where it already was
    /// would be listed forever (a sweep's process growing without end).
    @Test func aListingThatComesBackToWhereItWasIsAnError() throws {
        let (fd, port) = try Self.listener()
        defer { close(fd) }
        // Answers up to 5 requests, one per connection, with the same page
        // (made before the fork: the child only reads and writes).
        let answer = Array("HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: \(Self.page.utf8.count)\r\nConnection: close\r\n\r\n\(Self.page)".utf8)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let store = ChildProcess {
            for _ in 0..<5 {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return 1 }
                // The request's head, to its blank line (a GET has no body).
                var last4: UInt32 = 0
                while last4 != 0x0D0A_0D0A {
                    let count = read(connection, &buffer, 1)
                    if count <= 0 { break }
                    last4 = last4 << 8 | UInt32(buffer[0])
                }
                _ = answer.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                close(connection)
            }
            return 0
        }
        defer { store.terminate() }
        let client = S3Client(settings: try S3Settings(url: "http://key:secret@127.0.0.1:\(port)/bucket"))
        var listed = 0
        do {
            try client.forEachObject(prefix: "upload/") { _ in listed += 1 }
            Issue.record("the listing ended")
        } catch let error as S3Error {
            #expect(error.code == .inconsistentAnswer, "\(error)")
        }
        #expect(listed == 2, "the first page, and the one that came back to it")
    }
}
