import CFastCGI

/// One libfcgi request slot, reused for every request a worker accepts. Its
/// address must not move (libfcgi's streams point back into it), so it lives
/// in its own allocation.
final class FastCGIRequest {
    private let raw: UnsafeMutablePointer<FCGX_Request>

    /// Call once per process, on the main thread, before any request slot.
    static func initializeLibrary() -> Bool { FCGX_Init() == 0 }

    init(listenFD: Int32) {
        raw = .allocate(capacity: 1)
        raw.initialize(to: FCGX_Request())
        // Fail (rather than retry) an accept interrupted by a signal.
        FCGX_InitRequest(raw, listenFD, Int32(FCGI_FAIL_ACCEPT_ON_INTR))
    }

    deinit {
        FCGX_Free(raw, 0)
        raw.deallocate()
    }

    /// Accepts the next request and reads its parameters; false when there
    /// was none to accept (non-blocking socket) or accepting failed.
    func accept() -> Bool { FCGX_Accept_r(raw) >= 0 }

    /// The accepted connection (for its peer's address); -1 when closed.
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

    /// Ends the request and closes the connection even if the web server
    /// asked to keep it (a peer refused by listen_allowed_clients).
    func finishAndClose() {
        raw.pointee.keepConnection = 0
        FCGX_Finish_r(raw)
    }

    /// (libfcgi's struct marks these fields private; they have been stable
    /// since 2.4.0, and ipcFd above is one of them.)
    /// From now on `accept()` only reads the kept connection: when the web
    /// server has closed it, accept() fails instead of taking a new
    /// connection from the listening socket (which a worker that has stopped
    /// accepting must leave to the others).
    func keepConnectionOnly() { raw.pointee.listen_sock = -1 }

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
