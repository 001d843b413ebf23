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

    /// The accepted connection (for its peer's address).
    var connectionFD: Int32 { raw.pointee.ipcFd }

    /// Ends the request: flushes the answer and closes the connection.
    func finish() { FCGX_Finish_r(raw) }

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
