#if canImport(Glibc)
import Glibc
#endif

/// Publishes to an Nchan publisher location (`live_publish_url`, e.g.
/// `http://127.0.0.1/ireporter-publish`): one HTTP/1.0 POST per message,
/// on a loopback connection with short timeouts, so a stopped nginx costs
/// an upload at most a fraction of a second (and a warning), never the upload.
public final class NchanPublisher: LiveFeed {
    private let host: String
    private let port: String
    private let path: String
    private let timeoutMillis: Int32

    /// nil when `url` is not `http://HOST[:PORT]/PATH`.
    public init?(url: String, timeoutMillis: Int32 = 500) {
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

    public func publish(_ message: [UInt8]) {
        do throws(SystemError) {
            let status = try post(message)
            if !(200..<300).contains(status) { Log.warning("live feed: \(host):\(port)\(path) answered HTTP \(status)") }
        } catch {
            Log.warning("live feed: \(error)")
        }
    }

    /// The HTTP status of one POST.
    private func post(_ body: [UInt8]) throws(SystemError) -> Int {
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
        defer { close(fd) }
        if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
            guard errno == EINPROGRESS else { throw SystemError("connect to \(host):\(port)") }
            try wait(fd, for: Int16(POLLOUT), "connect to \(host):\(port)")
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length)
            if failure != 0 { throw SystemError("connect to \(host):\(port)", code: failure) }
        }
        let head = "POST \(path) HTTP/1.0\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\n\r\n"
        var request = Array(head.utf8) + body
        while !request.isEmpty {
            let sent = send(fd, request, request.count, Int32(MSG_NOSIGNAL))
            if sent < 0 && (errno == EAGAIN || errno == EINTR) {
                try wait(fd, for: Int16(POLLOUT), "send to \(host):\(port)")
                continue
            }
            guard sent > 0 else { throw SystemError("send to \(host):\(port)") }
            request.removeFirst(sent)
        }
        // "HTTP/1.1 201 Created": the status is all we read.
        var answer = [UInt8](repeating: 0, count: 64)
        var received = 0
        while received < 12 {
            try wait(fd, for: Int16(POLLIN), "read the answer of \(host):\(port)")
            let count = answer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + received, $0.count - received, 0) }
            if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            guard count > 0 else { break }
            received += count
        }
        guard received >= 12, let status = Int(String(decoding: answer[9..<12], as: UTF8.self)) else {
            throw SystemError("no HTTP answer from \(host):\(port)", code: EPROTO)
        }
        return status
    }

    private func wait(_ fd: Int32, for events: Int16, _ operation: String) throws(SystemError) {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        let ready = try retryingInterrupted("poll") { poll(&entry, 1, timeoutMillis) }
        if ready == 0 { throw SystemError(operation, code: ETIMEDOUT) }
    }
}
