import FuzzSupport
import IReporterKit

// The JSON-RPC endpoint's body: JSONParser.parse must accept only JSON (the
// independent JSONValidator agrees), and the whole service (IReporterAPI on
// the in-memory stores, every method reachable) must answer every body with
// JSON, or with nothing (HTTP 204) for notifications only; never crash.

nonisolated(unsafe) let api: IReporterAPI = {
    var policy = AppServices.Policy()
    policy.passwordHashing.memoryKiB = 64 // the rules are fuzzed here, not Argon2's cost
    policy.passwordHashing.iterations = 1
    return IReporterAPI(services: try! AppServices.inMemory(policy: policy))
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = bytes(data, size)
    if (try? JSONParser.parse(input)) != nil {
        var validator = JSONValidator(input)
        check(validator.validate(), "the parser accepted what is not JSON: \(show(input))")
    }
    let response = api.handle(jsonRPC: input, of: APIRequest(parameters: FormData()))
    if response.body.isEmpty {
        check(response.status == 204, "an empty answer with status \(response.status) for \(show(input))")
    } else {
        var validator = JSONValidator(response.body)
        check(response.status == 200 && validator.validate(), "not JSON: \(show(response.body)) for \(show(input))")
    }
    return 0
}
