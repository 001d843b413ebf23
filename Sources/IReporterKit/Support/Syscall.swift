#if canImport(Glibc)
import Glibc
#endif

/// Calls a system function until it is not interrupted by a signal (EINTR),
/// and turns its failure (-1) into a `SystemError` naming `operation` with
/// the errno of that call: EINTR is handled here, not at each call site.
@discardableResult
func retryingInterrupted<T: FixedWidthInteger>(_ operation: @autoclosure () -> String,
                                               _ call: () -> T) throws(SystemError) -> T {
    while true {
        let result = call()
        if result >= 0 { return result }
        let code = errno
        if code != EINTR { throw SystemError(operation(), code: code) }
    }
}

/// Whether `fd` is a TCP socket (IPv4 or IPv6), not a Unix one: TCP's
/// options apply to it.
func isTCPSocket(_ fd: Int32) -> Bool {
    var domain: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0 && (domain == AF_INET || domain == AF_INET6)
}
