import CCurl

/// One libcurl easy handle, owned (cleaned up in deinit) and reused from
/// request to request, so the connection to the server stays open between
/// them: libcurl checks a kept connection before it uses it again, and sends
/// a request once more on a new one when the kept one closes before any of
/// the answer came (never after a timeout). Not shared between threads: each
/// worker has its own (the S3 client's, the live feed's).
final class CurlTransfer {
    struct Response {
        let status: Int
        let body: [UInt8]
    }

    private let handle: UnsafeMutableRawPointer
    private var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    /// Never through a proxy named by the environment (`http_proxy`): for a
    /// peer on this host.
    private let direct: Bool

    /// libcurl's global set-up, once per process before the first handle.
    private static let globalSetUp: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    init(direct: Bool = false) {
        self.direct = direct
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
                if direct { set(ir_curl_set_string(handle, CURLOPT_PROXY, "")) }
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

    /// The parts of an absolute URL as libcurl reads it (its URL API); nil
    /// when libcurl refuses it or it has no host.
    static func parts(of url: String) -> (scheme: String, host: String, path: String)? {
        guard let parsed = curl_url() else { return nil }
        defer { curl_url_cleanup(parsed) }
        guard curl_url_set(parsed, CURLUPART_URL, url, 0) == CURLUE_OK else { return nil }
        func part(_ which: CURLUPart) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(parsed, which, &value, 0) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        guard let scheme = part(CURLUPART_SCHEME), let host = part(CURLUPART_HOST), !host.isEmpty,
              let path = part(CURLUPART_PATH) else { return nil }
        return (scheme, host, path)
    }
}
