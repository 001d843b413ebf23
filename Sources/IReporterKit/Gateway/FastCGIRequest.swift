#if canImport(Glibc)
import Glibc
#endif
import CFastCGI

/// One libfcgi request slot, reused for every request a worker accepts. Its
/// address must not move (libfcgi's streams point back into it), so it lives
/// in its own allocation. (libfcgi's struct marks `ipcFd` and
/// `keepConnection`, used here, private; they have been stable since 2.4.0.)
final class FastCGIRequest {
    private let raw: UnsafeMutablePointer<FCGX_Request>

    /// Call once per process, on the main thread, before any request slot.
    static func initializeLibrary() -> Bool { FCGX_Init() == 0 }

    /// The listening socket new connections come from; -1 once the slot
    /// serves only its kept connection.
    private var listenFD: Int32
    /// Whether its connections are TCP (asked once: a Unix socket's take no TCP_NODELAY).
    private let acceptsTCP: Bool

    init(listenFD: Int32) {
        self.listenFD = listenFD
        acceptsTCP = isTCPSocket(listenFD)
        raw = .allocate(capacity: 1)
        raw.initialize(to: FCGX_Request())
        // libfcgi never accepts by itself (listen_sock -1: its accept fails):
        // `accept(allowing:)` takes the connection and checks its peer before
        // libfcgi reads a byte of it.
        FCGX_InitRequest(raw, -1, 0)
    }

    deinit {
        FCGX_Free(raw, 0)
        raw.deallocate()
    }

    /// `refused`: the peer's address, as the warning names it.
    enum Accepted { case request, none, refused(peer: String) }

    /// Reads the next request's parameters: from the kept connection, or
    /// from a new one accepted here. A new connection from a peer
    /// `allowedClients` refuses is closed unread (a refused peer trickling
    /// parameters would otherwise hold the worker until the watchdog).
    /// `.none` when there was no request (non-blocking socket, another
    /// worker took the connection, the kept connection closed).
    func accept(allowing allowedClients: ClientAllowList) -> Accepted {
        if raw.pointee.ipcFd < 0 {
            guard listenFD >= 0 else { return .none }
            let connection = Glibc.accept(listenFD, nil, nil)
            guard connection >= 0 else { return .none }
            if let peer = allowedClients.refusedPeer(connection: connection) {
                close(connection)
                return .refused(peer: peer)
            }
            if acceptsTCP {
                // No replies to wait for (libfcgi's own accept does this, for IPv4 only).
                var on: Int32 = 1
                _ = setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            }
            raw.pointee.ipcFd = connection
            // libfcgi finishes the previous request first, closing the
            // connection unless it is marked kept; the new request's own
            // flag replaces this one.
            raw.pointee.keepConnection = 1
        }
        return FCGX_Accept_r(raw) >= 0 ? .request : .none
    }

    /// The accepted connection (polled for its next request); -1 when closed.
    var connectionFD: Int32 { raw.pointee.ipcFd }

    /// Ends the request: flushes the answer and closes the connection,
    /// unless the web server asked to keep it (FCGI_KEEP_CONN, nginx's
    /// `fastcgi_keep_conn on`): then `isKept` and the next `accept()` reads
    /// the connection's next request.
    func finish() {
        // A kept connection's next request follows this one's records: what
        // is left of this body (an answer given before reading it all, the
        // empty record that ends it) must be read first.
        if raw.pointee.keepConnection != 0, let input = raw.pointee.in {
            var scratch = [CChar](repeating: 0, count: 4096)
            while FCGX_GetStr(&scratch, Int32(scratch.count), input) > 0 {}
        }
        FCGX_Finish_r(raw)
    }

    var isKept: Bool { raw.pointee.ipcFd >= 0 }

    /// From now on `accept(allowing:)` only reads the kept connection: when
    /// the web server has closed it, there is no request, instead of a new
    /// connection taken from the listening socket (which a worker that has
    /// stopped accepting must leave to the others).
    func keepConnectionOnly() { listenFD = -1 }

    func param(_ name: String) -> String? {
        guard let value = FCGX_GetParam(name, raw.pointee.envp) else { return nil }
        return String(cString: value)
    }

    /// Reads up to `buffer.count` bytes of the body; fewer means its end.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        Int(FCGX_GetStr(buffer.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(buffer.count), raw.pointee.in))
    }

    /// Writes the whole answer; false if the web server went away.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            FCGX_PutStr(buffer.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(buffer.count), raw.pointee.out)
                == Int32(buffer.count)
        }
    }
}
