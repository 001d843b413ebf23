#if canImport(Glibc)
import Glibc
#endif

public struct SystemError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let operation: String

    public init(_ operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
    }

    public var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
