import Testing
@testable import IReporterKit

/// How the gateway tells a request a browser sent from another web site
/// (the refusal itself: JSONRPCTests and the end-to-end suite).
struct CrossOriginTests {
    @Test func originsAndFetchSites() {
        let nginx = ["HTTP_HOST": "example.com", "SERVER_PORT": "8080", "REQUEST_SCHEME": "http"] // $host: no port
        let cases: [([String: String], Bool)] = [
            ([:], false), // the 2012 app, curl
            (nginx, false),
            (nginx.merging(["HTTP_ORIGIN": "http://example.com:8080"]) { $1 }, false),
            (nginx.merging(["HTTP_ORIGIN": "http://EXAMPLE.com:8080"]) { $1 }, false),
            // issue 26: another port of the same name, another scheme, a longer name
            (nginx.merging(["HTTP_ORIGIN": "http://example.com:8081"]) { $1 }, true),
            (nginx.merging(["HTTP_ORIGIN": "http://example.com"]) { $1 }, true),
            (nginx.merging(["HTTP_ORIGIN": "https://example.com:8080"]) { $1 }, true),
            (nginx.merging(["HTTP_ORIGIN": "http://example.com:8080.evil.com"]) { $1 }, true),
            (nginx.merging(["HTTP_ORIGIN": "http://example.com.evil.com:8080"]) { $1 }, true),
            (nginx.merging(["HTTP_ORIGIN": "http://user@example.com:8080"]) { $1 }, true),
            (nginx.merging(["HTTP_ORIGIN": "ftp://example.com:8080"]) { $1 }, true),
            (nginx.merging(["HTTP_ORIGIN": "null"]) { $1 }, true),
            (nginx.merging(["HTTP_ORIGIN": "http://example.com:"]) { $1 }, true),
            (nginx.merging(["HTTP_ORIGIN": "http://example.com:99999"]) { $1 }, true),
            // Without Origin, the Referer's origin; its path does not matter.
            (nginx.merging(["HTTP_REFERER": "http://example.com:8080/photos?x#y"]) { $1 }, false),
            (nginx.merging(["HTTP_REFERER": "http://example.com:8081/"]) { $1 }, true),
            (nginx.merging(["HTTP_REFERER": "http://example.com:8080.evil.com/"]) { $1 }, true),
            (nginx.merging(["HTTP_ORIGIN": "http://example.com:8081", "HTTP_REFERER": "http://example.com:8080/"]) { $1 },
             true),
            // The default port, written or not, on either side.
            (["HTTP_HOST": "example.com", "SERVER_PORT": "80", "HTTP_ORIGIN": "http://example.com"], false),
            (["HTTP_HOST": "example.com:80", "HTTP_ORIGIN": "http://example.com"], false),
            (["HTTP_HOST": "example.com", "SERVER_PORT": "80", "HTTP_ORIGIN": "http://example.com:80"], false),
            (["HTTP_HOST": "example.com", "HTTPS": "on", "SERVER_PORT": "443", "HTTP_ORIGIN": "https://example.com"], false),
            (["HTTP_HOST": "example.com", "HTTPS": "on", "SERVER_PORT": "443", "HTTP_ORIGIN": "http://example.com"], true),
            (["HTTP_HOST": "example.com", "HTTPS": "off", "SERVER_PORT": "443", "HTTP_ORIGIN": "https://example.com"], true),
            // Apache passes the Host header as sent, port included.
            (["HTTP_HOST": "example.com:8080", "SERVER_PORT": "8080", "HTTP_ORIGIN": "http://example.com:8080"], false),
            (["HTTP_HOST": "example.com:8080", "SERVER_PORT": "8080", "HTTP_ORIGIN": "http://example.com:9090"], true),
            // IPv6 literals.
            (["HTTP_HOST": "[::1]", "SERVER_PORT": "8090", "HTTP_ORIGIN": "http://[::1]:8090"], false),
            (["HTTP_HOST": "[::1]:8090", "HTTP_ORIGIN": "http://[::1]:8090"], false),
            (["HTTP_HOST": "[::1]", "SERVER_PORT": "8090", "HTTP_ORIGIN": "http://[::1]:8091"], true),
            (["HTTP_HOST": "[::1]", "SERVER_PORT": "8090", "HTTP_ORIGIN": "http://[::2]:8090"], true),
            (["HTTP_HOST": "[::1]", "SERVER_PORT": "8090", "HTTP_ORIGIN": "http://[::1"], true),
            // Behind a TLS terminator or the cluster's front: the proxy's headers.
            (["HTTP_HOST": "example.com", "SERVER_PORT": "8080", "HTTP_X_FORWARDED_PROTO": "https",
              "HTTP_ORIGIN": "https://example.com"], false),
            (["HTTP_HOST": "example.com", "SERVER_PORT": "8080", "HTTP_X_FORWARDED_PROTO": "https",
              "HTTP_ORIGIN": "http://example.com:8080"], true),
            (["HTTP_HOST": "example.com", "SERVER_PORT": "8481", "HTTP_X_FORWARDED_PROTO": "http",
              "HTTP_X_FORWARDED_PORT": "8080", "HTTP_ORIGIN": "http://example.com:8080"], false),
            (["HTTP_HOST": "app1", "SERVER_PORT": "8481", "HTTP_X_FORWARDED_HOST": "example.com:8443, app1",
              "HTTP_X_FORWARDED_PROTO": "https", "HTTP_ORIGIN": "https://example.com:8443"], false),
            (["HTTP_ORIGIN": "https://example.com"], true), // no Host to compare with
            (["HTTP_SEC_FETCH_SITE": "same-origin"], false),
            (["HTTP_SEC_FETCH_SITE": "none"], false),
            (["HTTP_SEC_FETCH_SITE": "same-site"], true),
            (["HTTP_SEC_FETCH_SITE": "cross-site"], true),
            (nginx.merging(["HTTP_ORIGIN": "http://example.com:8080", "HTTP_SEC_FETCH_SITE": "cross-site"]) { $1 }, true),
        ]
        for (params, crossOrigin) in cases {
            #expect(APIResponder.isCrossOrigin(ParameterRequest(params)) == crossOrigin, "\(params)")
        }
    }

    @Test func originsAreReadAsBrowsersWriteThem() {
        #expect(WebOrigin("http://example.com") == WebOrigin(scheme: "http", host: "example.com", port: 80))
        #expect(WebOrigin("HTTPS://Example.COM") == WebOrigin(scheme: "https", host: "example.com", port: 443))
        #expect(WebOrigin("http://[::1]:8080/x") == WebOrigin(scheme: "http", host: "[::1]", port: 8080))
        #expect(WebOrigin("http://127.0.0.1:8480.evil.com") == nil)
        #expect(WebOrigin("http://:8080") == nil)
        #expect(WebOrigin("null") == nil)
        #expect(WebOrigin("file:///etc/passwd") == nil)
    }

    @Test func theRPCPath() {
        #expect(APIResponder.isJSONRPC("/iReporter/rpc"))
        #expect(APIResponder.isJSONRPC("/iReporter/rpc?x=1"))
        #expect(!APIResponder.isJSONRPC("/iReporter/"))
        #expect(!APIResponder.isJSONRPC("/iReporter/?rpc"))
        #expect(!APIResponder.isJSONRPC("/iReporter/rpcx"))
    }
}
