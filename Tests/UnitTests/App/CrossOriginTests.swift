import Testing
@testable import IReporterKit

/// How the gateway tells a request a browser sent from another web site
/// (the refusal itself: JSONRPCTests and the end-to-end suite).
struct CrossOriginTests {
    @Test func originsAndFetchSites() {
        let cases: [([String: String], Bool)] = [
            ([:], false), // the 2012 app, curl
            (["HTTP_HOST": "example.com"], false),
            (["HTTP_HOST": "example.com", "HTTP_ORIGIN": "https://example.com"], false),
            (["HTTP_HOST": "example.com", "HTTP_ORIGIN": "http://example.com:8080"], false), // nginx's $host has no port
            (["HTTP_HOST": "example.com:8080", "HTTP_ORIGIN": "http://example.com:8080"], false),
            (["HTTP_HOST": "example.com:8080", "HTTP_ORIGIN": "http://example.com:9090"], true),
            (["HTTP_HOST": "[::1]", "HTTP_ORIGIN": "http://[::1]:8090"], false),
            (["HTTP_HOST": "example.com", "HTTP_ORIGIN": "https://evil.example"], true),
            (["HTTP_HOST": "example.com", "HTTP_ORIGIN": "https://example.com.evil.example"], true),
            (["HTTP_HOST": "example.com", "HTTP_ORIGIN": "null"], true),
            (["HTTP_ORIGIN": "https://example.com"], true), // no Host to compare with
            (["HTTP_SEC_FETCH_SITE": "same-origin"], false),
            (["HTTP_SEC_FETCH_SITE": "none"], false),
            (["HTTP_SEC_FETCH_SITE": "same-site"], true),
            (["HTTP_SEC_FETCH_SITE": "cross-site"], true),
            (["HTTP_HOST": "example.com", "HTTP_ORIGIN": "https://example.com", "HTTP_SEC_FETCH_SITE": "cross-site"], true),
        ]
        for (params, crossOrigin) in cases {
            #expect(APIResponder.isCrossOrigin(ParameterRequest(params)) == crossOrigin, "\(params)")
        }
    }

    @Test func theRPCPath() {
        #expect(APIResponder.isJSONRPC("/iReporter/rpc"))
        #expect(APIResponder.isJSONRPC("/iReporter/rpc?x=1"))
        #expect(!APIResponder.isJSONRPC("/iReporter/"))
        #expect(!APIResponder.isJSONRPC("/iReporter/?rpc"))
        #expect(!APIResponder.isJSONRPC("/iReporter/rpcx"))
    }
}
