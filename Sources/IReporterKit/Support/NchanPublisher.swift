#if canImport(Glibc)
import Glibc
#endif

/// Publishes to an Nchan publisher location (`live_publish_url`, e.g.
/// `http://127.0.0.1/ireporter-publish`): an HTTP/1.1 POST per message on
/// a loopback connection kept open between uploads (a connection per
/// message cost each upload a connect, nginx an accept and both a close:
/// bench/profile-changes.md, issue 14), with short timeouts, so a stopped
/// nginx costs an upload at most a fraction of a second (and a warning),
/// never the upload. One worker, one connection: not for several threads.
public final class NchanPublisher: LiveFeed {
    private let host: String
    private let port: String
    private let path: String
    private let timeoutMillis: Int32
    /// `X-IReporter-Publish-Key`: nginx lets only the holder of the key publish.
    private let key: String
    /// The kept connection, -1 when there is none.
    private var connection: Int32 = -1

    /// nil when `url` is not `http://HOST[:PORT]/PATH`, or `key` is not a
    /// header value (letters, digits, `-`, `_`, `.`).
    public init?(url: String, key: String, timeoutMillis: Int32 = 500) {
        guard key.utf8.allSatisfy({ $0 < 0x80 && ($0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
                                                  || Character(Unicode.Scalar($0)).isLetter || Character(Unicode.Scalar($0)).isNumber) })
        else { return nil }
        self.key = key
        guard url.hasPrefix("http://") else { return nil }
        let rest = url.dropFirst("http://".count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let authority = rest[..<slash]
        path = String(rest[slash...])
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") { // [::1]:8080
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            port = after.hasPrefix(":") ? String(after.dropFirst()) : "80"
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = String(authority[authority.index(after: colon)...])
        } else {
            host = String(authority)
            port = "80"
        }
        guard !host.isEmpty, UInt16(port) != nil else { return nil }
        self.timeoutMillis = timeoutMillis
    }

    deinit { dropConnection() }

    public func publish(_ message: [UInt8]) {
        do throws(SystemError) {
            let status = try post(message)
            if !(200..<300).contains(status) { Log.warning("live feed: \(host):\(port)\(path) answered HTTP \(status)") }
        } catch {
            Log.warning("live feed: \(error)")
        }
    }

    /// The HTTP status of one POST. On the kept connection when nginx has
    /// not closed it (its keepalive_timeout, keepalive_requests, a reload);
    /// sent once more on a new one when the kept one turns out closed before
    /// any of the answer came (nginx closes only idle connections, so it
    /// did not take the message). Not after a timeout: an nginx that does
    /// not answer costs the upload one timeout, not two.
    private func post(_ body: [UInt8]) throws(SystemError) -> Int {
        if connection >= 0 && !isIdleAndOpen(connection) { dropConnection() }
        let reused = connection >= 0
        do {
            return try exchange(body)
        } catch let failure {
            dropConnection()
            guard reused, failure.beforeAnswer, failure.error.code != ETIMEDOUT else { throw failure.error }
        }
        do {
            return try exchange(body)
        } catch let failure {
            dropConnection()
            throw failure.error
        }
    }

    /// A failed exchange: whether it failed before any byte of the answer.
    private struct ExchangeFailure: Error {
        let error: SystemError
        let beforeAnswer: Bool
    }

    private func exchange(_ body: [UInt8]) throws(ExchangeFailure) -> Int {
        do throws(SystemError) {
            if connection < 0 { connection = try connect() }
            let head = "POST \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\n"
                + "X-IReporter-Publish-Key: \(key)\r\nContent-Length: \(body.count)\r\n\r\n"
            try send(Array(head.utf8) + body, on: connection)
        } catch {
            throw ExchangeFailure(error: error, beforeAnswer: true)
        }
        return try readAnswer(from: connection)
    }

    private func connect() throws(SystemError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var results: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, port, &hints, &results)
        guard resolved == 0, let info = results else {
            throw SystemError("resolve \(host): \(String(cString: gai_strerror(resolved)))", code: EINVAL)
        }
        defer { freeaddrinfo(results) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
                        | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        do throws(SystemError) {
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
                guard errno == EINPROGRESS else { throw SystemError("connect to \(host):\(port)") }
                try wait(fd, for: Int16(POLLOUT), "connect to \(host):\(port)")
                var failure: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length)
                if failure != 0 { throw SystemError("connect to \(host):\(port)", code: failure) }
            }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    private func send(_ bytes: [UInt8], on fd: Int32) throws(SystemError) {
        var sentSoFar = 0
        while sentSoFar < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sentSoFar, $0.count - sentSoFar, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && (errno == EAGAIN || errno == EINTR) {
                try wait(fd, for: Int16(POLLOUT), "send to \(host):\(port)")
                continue
            }
            guard sent > 0 else { throw SystemError("send to \(host):\(port)") }
            sentSoFar += sent
        }
    }

    /// Reads the status line, the headers and the body (its Content-Length),
    /// so that the connection is ready for the next POST; drops the
    /// connection when nginx says it closes it or the length is unknown.
    private func readAnswer(from fd: Int32) throws(ExchangeFailure) -> Int {
        var answer: [UInt8] = []
        var headEnd: Int?
        var expected = Int.max
        var buffer = [UInt8](repeating: 0, count: 4096)
        do throws(SystemError) {
            while answer.count < expected {
                try wait(fd, for: Int16(POLLIN), "read the answer of \(host):\(port)")
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
                if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                if count < 0 { throw SystemError("read the answer of \(host):\(port)") }
                if count == 0 { break }
                answer += buffer[..<count]
                if headEnd == nil, let end = answer.firstRange(of: [13, 10, 13, 10])?.upperBound {
                    headEnd = end
                    let headers = Self.headerLines(answer[..<end])
                    guard let length = Self.contentLength(headers), !Self.closes(headers) else { break }
                    expected = end + length
                }
                if headEnd == nil && answer.count > 16_384 { break }
            }
        } catch {
            throw ExchangeFailure(error: error, beforeAnswer: answer.isEmpty)
        }
        guard answer.count >= 12, answer.starts(with: Array("HTTP/1.".utf8)),
              let status = Int(String(decoding: answer[9..<12], as: UTF8.self)) else {
            throw ExchangeFailure(error: SystemError("no HTTP answer from \(host):\(port)", code: EPROTO),
                                  beforeAnswer: answer.isEmpty)
        }
        if answer.count != expected { dropConnection() }
        return status
    }

    /// The header lines of an answer's head (after its status line), lowercased.
    private static func headerLines(_ head: ArraySlice<UInt8>) -> [String] {
        String(decoding: head, as: UTF8.self).split(separator: "\r\n").dropFirst().map { $0.lowercased() }
    }

    private static func contentLength(_ headers: [String]) -> Int? {
        for line in headers where line.hasPrefix("content-length:") {
            return Int(String(line.dropFirst("content-length:".count).filter { $0 != " " && $0 != "\t" }))
        }
        return nil
    }

    private static func closes(_ headers: [String]) -> Bool {
        headers.contains { $0.hasPrefix("connection:") && $0.contains("close") }
    }

    /// The kept connection has nothing to read and no hang-up pending: nginx
    /// did not close it while it was idle.
    private func isIdleAndOpen(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 0
    }

    private func dropConnection() {
        if connection >= 0 { close(connection) }
        connection = -1
    }

    private func wait(_ fd: Int32, for events: Int16, _ operation: String) throws(SystemError) {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        let ready = try retryingInterrupted("poll") { poll(&entry, 1, timeoutMillis) }
        if ready == 0 { throw SystemError(operation, code: ETIMEDOUT) }
    }
}
