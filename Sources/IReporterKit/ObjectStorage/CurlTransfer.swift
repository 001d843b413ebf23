import CCurl

/// One libcurl easy handle, owned (cleaned up in deinit) and reused from
/// request to request, so the connection to the server stays open between
/// them. Not shared between threads: each worker has its own.
final class CurlTransfer {
    struct Response {
        let status: Int
        let body: [UInt8]
    }

    private let handle: UnsafeMutableRawPointer
    private var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

    /// libcurl's global set-up, once per process before the first handle.
    private static let globalSetUp: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    init() {
        _ = Self.globalSetUp
        guard let handle = curl_easy_init() else { fatalError("curl_easy_init: out of memory") }
        self.handle = handle
    }

    deinit { curl_easy_cleanup(handle) }

    /// Sends one request and reads the whole answer. `awsSignature` is
    /// libcurl's CURLOPT_AWS_SIGV4 parameter ("aws:amz:REGION:SERVICE"),
    /// signed with `user` ("KEY:SECRET").
    func perform(method: String, url: String, headers: [String] = [], body: [UInt8]? = nil,
                 awsSignature: String? = nil, user: String? = nil, timeoutMillis: Int) throws(CurlError) -> Response {
        curl_easy_reset(handle)
        var collected = [UInt8]()
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        // (No "Expect:" to turn 100-continue off: libcurl signs every header
        // of the list, the removed one too, and the signature would not match.)
        for header in headers { list = curl_slist_append(list, header) }
        let code = errorBuffer.withUnsafeMutableBufferPointer { errors -> CURLcode in
            errors[0] = 0
            return withUnsafeMutablePointer(to: &collected) { sink -> CURLcode in
                var code = ir_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errors.baseAddress)
                func set(_ next: CURLcode) { if code == CURLE_OK { code = next } }
                set(ir_curl_set_string(handle, CURLOPT_URL, url))
                set(ir_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, method))
                set(ir_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
                set(ir_curl_set_long(handle, CURLOPT_TIMEOUT_MS, timeoutMillis))
                set(ir_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, timeoutMillis))
                set(ir_curl_set_pointer(handle, CURLOPT_HTTPHEADER, list))
                set(ir_curl_set_write_function(handle) { data, size, count, context in
                    let sink = context!.assumingMemoryBound(to: [UInt8].self)
                    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
                    sink.pointee.append(contentsOf: bytes)
                    return size * count
                })
                set(ir_curl_set_pointer(handle, CURLOPT_WRITEDATA, sink))
                if method == "HEAD" { set(ir_curl_set_long(handle, CURLOPT_NOBODY, 1)) }
                if let awsSignature, let user {
                    set(ir_curl_set_string(handle, CURLOPT_AWS_SIGV4, awsSignature))
                    set(ir_curl_set_string(handle, CURLOPT_USERPWD, user))
                }
                guard code == CURLE_OK else { return code }
                guard let body else { return curl_easy_perform(handle) }
                // libcurl reads the body from this buffer while performing: it must outlive the call.
                return body.withUnsafeBytes { bytes -> CURLcode in
                    var code = ir_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
                    if code == CURLE_OK {
                        code = ir_curl_set_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
                    }
                    return code == CURLE_OK ? curl_easy_perform(handle) : code
                }
            }
        }
        // The buffer must not outlive `errors` in libcurl's hands.
        _ = ir_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, nil)
        guard code == CURLE_OK else {
            throw CurlError(code: code, details: errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        var status = 0
        _ = ir_curl_response_code(handle, &status)
        return Response(status: status, body: collected)
    }
}
