@testable import IReporterKit

/// A gateway request that is only its FastCGI parameters: no body, and
/// whatever is written goes nowhere (the tests read the responder's answer).
final class ParameterRequest: GatewayRequest {
    let params: [String: String]
    init(_ params: [String: String]) { self.params = params }
    func param(_ name: String) -> String? { params[name] }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int { 0 }
    func write(_ bytes: [UInt8]) -> Bool { true }
}
