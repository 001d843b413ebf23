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
