#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
@testable import IReporterKit

/// The live feed's publisher keeps one connection to nginx between uploads
/// and gets a new one, without losing the message, when nginx closed the
/// kept one (idle timeout, keepalive_requests, a reload). The peer is a
/// forked loopback HTTP server that plays nginx's part; the real Nchan is
/// in Tests/EndToEnd/test_live.py.
@Suite(.serialized)
struct NchanPublisherTests {
    let scratch = ScratchDirectory("nchan-publisher")

    /// How the stand-in for nginx treats a connection after answering.
    enum Peer {
        /// Keeps it for the next request (keep-alive).
        case keepsConnections
        /// Closes it after each answer, saying nothing (an idle close).
        case closesAfterEachAnswer
        /// Answers with `Connection: close`, then closes it.
        case announcesClose
        /// Reads the second request on a connection, then closes it unanswered
        /// (a close that crossed the request).
        case dropsSecondRequestUnanswered
        /// Answers the first request, then reads the second and stops
        /// answering (an nginx stopped with SIGSTOP, say).
        case hangsAfterFirstAnswer
    }

    /// What the peer saw: connections accepted and messages answered, in order.
    struct Seen: Equatable {
        var connections = 0
        var answered: [String] = []
    }

    /// Publishes `messages` through a publisher to a peer behaving as `peer`;
    /// `answered`: how many the peer answers before it stops. `publishing`:
    /// how long the last publish took, in milliseconds (with `proxy`, the
    /// child and all of them).
    /// With `proxy`, the publisher runs in a child process whose `http_proxy`
    /// names it.
    private func publish(_ messages: [String], to peer: Peer, answered: Int? = nil, timeoutMillis: Int32 = 2000,
                         proxy: String? = nil, publishing: inout Int64) throws -> Seen {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(listener >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        #expect(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let log = "\(scratch.path)/seen"
        let server = ChildProcess { serve(listener, peer: peer, answering: answered ?? messages.count, log: log) }
        close(listener)
        let publisher = try #require(NchanPublisher(url: "http://127.0.0.1:\(port)/ireporter-publish", key: publishKey,
                                                                timeoutMillis: timeoutMillis))
        if let proxy {
            let started = monotonicMillis()
            let child = ChildProcess {
                setenv("http_proxy", proxy, 1)
                for message in messages { publisher.publish(Array(message.utf8)) }
                return 0
            }
            #expect(child.wait(seconds: 10) == 0)
            publishing = monotonicMillis() - started
        } else {
            for message in messages {
                let started = monotonicMillis()
                publisher.publish(Array(message.utf8))
                publishing = monotonicMillis() - started
            }
        }
        #expect(server.wait(seconds: 10) == 0, "the peer ended as planned")
        var seen = Seen()
        for text in try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n") {
            if text == "connection" { seen.connections += 1 } else { seen.answered.append(String(text)) }
        }
        return seen
    }

    private func publish(_ messages: [String], to peer: Peer) throws -> Seen {
        var publishing: Int64 = 0
        return try publish(messages, to: peer, publishing: &publishing)
    }

    @Test func messagesShareOneKeptConnection() throws {
        let seen = try publish(["a", "b", "c"], to: .keepsConnections)
        #expect(seen == Seen(connections: 1, answered: ["a", "b", "c"]))
    }

    @Test func aConnectionClosedWhileIdleIsReplaced() throws {
        let seen = try publish(["a", "b", "c"], to: .closesAfterEachAnswer)
        #expect(seen == Seen(connections: 3, answered: ["a", "b", "c"]))
    }

    @Test func connectionCloseIsObeyed() throws {
        let seen = try publish(["a", "b"], to: .announcesClose)
        #expect(seen == Seen(connections: 2, answered: ["a", "b"]))
    }

    @Test func aMessageTheClosedConnectionDroppedIsSentAgain() throws {
        // a; b dropped, b again on a new connection; c dropped, c again on a third.
        let seen = try publish(["a", "b", "c"], to: .dropsSecondRequestUnanswered)
        #expect(seen == Seen(connections: 3, answered: ["a", "b", "c"]))
    }

    @Test func aPeerThatStopsAnsweringCostsOneTimeout() throws {
        var publishing: Int64 = 0
        let seen = try publish(["a", "b"], to: .hangsAfterFirstAnswer, answered: 1, timeoutMillis: 400,
                               publishing: &publishing)
        #expect(seen == Seen(connections: 1, answered: ["a"]))
        // "b" (timed alone: the connect and "a" are not) waits for one 400 ms
        // timeout; sent again on a new connection, it would wait for two, 800.
        #expect(publishing >= 400 && publishing < 790, "\(publishing) ms")
    }

    @Test func aProxyInTheEnvironmentIsNotUsed() throws {
        var publishing: Int64 = 0
        let seen = try publish(["a"], to: .keepsConnections, proxy: "http://127.0.0.1:1", publishing: &publishing)
        #expect(seen == Seen(connections: 1, answered: ["a"]))
    }

    @Test func onlyAnHTTPURLWithAPathIsTaken() {
        for url in ["http://127.0.0.1:8080/ireporter-publish", "http://[::1]:8080/ireporter-publish", "http://localhost/p"] {
            #expect(NchanPublisher(url: url, key: publishKey) != nil, "\(url)")
        }
        for url in ["http://127.0.0.1:8080", "https://127.0.0.1/ireporter-publish", "http://:80/p", "http://127.0.0.1:99999/p",
                    "127.0.0.1/ireporter-publish", "http://127.0.0.1 /p"] {
            #expect(NchanPublisher(url: url, key: publishKey) == nil, "\(url)")
        }
    }

    @Test func aKeyThatIsNotAHeaderValueIsRefused() {
        #expect(NchanPublisher(url: "http://127.0.0.1:1/ireporter-publish", key: "a\r\nX-Other: 1") == nil)
        #expect(NchanPublisher(url: "http://127.0.0.1:1/ireporter-publish", key: "clé") == nil)
    }

    @Test func noListenerCostsAWarningNotTheCaller() throws {
        let publisher = try #require(NchanPublisher(url: "http://127.0.0.1:1/ireporter-publish", key: publishKey))
        let started = monotonicMillis()
        publisher.publish(Array("a".utf8))
        #expect(monotonicMillis() - started < 1000)
    }
}

/// The peer's side, in the forked child: serves until `count` messages are
/// answered, logging each connection and each answered message to `log`.
private func serve(_ listener: Int32, peer: NchanPublisherTests.Peer, answering count: Int, log: String) -> Int32 {
    let output = open(log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    func note(_ line: String) { _ = Array((line + "\n").utf8).withUnsafeBytes { write(output, $0.baseAddress, $0.count) } }
    if peer == .hangsAfterFirstAnswer {
        let connection = accept(listener, nil, nil)
        guard connection >= 0, let first = readRequest(connection) else { return 1 }
        note("connection")
        answer(connection, closing: false)
        note(first)
        _ = readRequest(connection) // the second, never answered
        // Until the publisher gives up on the answer and hangs up (bounded, not a fixed time).
        var hangUp = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        _ = poll(&hangUp, 1, 10_000)
        return 0
    }
    var answered = 0
    while answered < count {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return 1 }
        note("connection")
        var requestsOnConnection = 0
        while answered < count, let body = readRequest(connection) {
            requestsOnConnection += 1
            if peer == .dropsSecondRequestUnanswered && requestsOnConnection == 2 { break }
            answer(connection, closing: peer == .announcesClose)
            note(body)
            answered += 1
            if peer != .keepsConnections && peer != .dropsSecondRequestUnanswered { break }
        }
        close(connection)
    }
    return 0
}

/// Nchan's answer to a publisher's POST.
private func answer(_ connection: Int32, closing: Bool) {
    let answer = "HTTP/1.1 202 Accepted\r\nContent-Type: text/plain\r\n\(closing ? "Connection: close\r\n" : "")"
        + "Content-Length: 19\r\n\r\nqueued messages: 1\n"
    _ = Array(answer.utf8).withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
}

/// The key nginx's publisher location asks for (deploy/nginx/ireporter-live.conf).
private let publishKey = "unit-test-key-0123456789"

/// One request's body (`nokey:` before it when it came without the
/// publisher's key), or nil at the end of the connection.
private func readRequest(_ connection: Int32) -> String? {
    var request: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1024)
    while true {
        let text = String(decoding: request, as: UTF8.self)
        if let headEnd = text.range(of: "\r\n\r\n") {
            let head = text[..<headEnd.lowerBound].lowercased()
            let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).filter { $0 != " " }) } ?? 0
            let body = text[headEnd.upperBound...]
            let keyed = head.split(separator: "\r\n").contains { $0 == "x-ireporter-publish-key: \(publishKey)" }
            if body.utf8.count >= length { return (keyed ? "" : "nokey:") + String(body) }
        }
        let count = buffer.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
        if count <= 0 { return nil }
        request += buffer[..<count]
    }
}
