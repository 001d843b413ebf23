import Foundation
import Testing
@testable import IReporterKit

/// `log_format = json`: one JSON object per line, valid whatever the
/// message holds; `text` as before (what deploy/fail2ban reads).
struct LogTests {
    static let hostileNames: [[UInt8]] = [
        Array(#"x" from 198.51.100.1"#.utf8), Array("a\nb\r\u{2028}c\u{0}\u{7F}".utf8), [0xC3, 0x28, 0xFF, 0x22, 0x5C],
        Array(#"\u0022}{"level":"error"#.utf8),
    ]

    @Test func aJSONLineIsOneValidObjectWhateverTheMessageHolds() throws {
        for name in Self.hostileNames {
            let message = "login failed for \(SecurityLog.quoted(name)) from 203.0.113.7" + String(decoding: name, as: UTF8.self)
            let line = Log.line(.warning, message, format: .json, time: "2026-12-02T06:55:00Z", pid: 42)
            #expect(line.hasSuffix("}\n") && line.dropLast().firstIndex(of: "\n") == nil, "one line: \(line)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["message"] as? String == message)
            #expect(object["level"] as? String == "warning" && object["pid"] as? Int == 42)
            #expect(object["time"] as? String == "2026-12-02T06:55:00Z" && object.count == 4)
        }
    }

    @Test func theTextLineIsTheOneFail2banReads() {
        #expect(Log.line(.warning, #"login failed for "alice" from 203.0.113.7"#, format: .text, time: "2026-12-02T06:55:00Z", pid: 42)
                == "2026-12-02T06:55:00Z ireporter[42] warning: login failed for \"alice\" from 203.0.113.7\n")
    }

    /// From an on-call review: `error: stream: MariaDB error 2002 …` did not
    /// say which request met it (a Mastodon timeline's, here).
    @Test func anErrorInARequestNamesIt() {
        let request = "GET /api/v1/timelines/public (request 4f2a, client 192.0.2.7)"
        #expect(Log.line(.error, "stream: MariaDB error 2002", format: .text, time: "2026-12-02T06:55:00Z", pid: 42, request: request)
                == "2026-12-02T06:55:00Z ireporter[42] error: stream: MariaDB error 2002 (while serving \(request))\n")
        #expect(Log.line(.error, "x", format: .json, time: "t", pid: 42, request: "GET / (request -, client -)")
                == #"{"time":"t","level":"error","pid":42,"message":"x","request":"GET / (request -, client -)"}"# + "\n")
    }

    @Test func levelsAreOrdered() {
        #expect(Log.Level.info < .warning && Log.Level.warning < .error)
    }

    @Test func anAccessLineInJSONHasEveryField() throws {
        var record = APIResponder.Record(client: "203.0.113.7", method: "POST", uri: "/iReporter/rpc", requestID: "abc")
        (record.command, record.call, record.outcome, record.bytes) = ("rpc", "login,stream", "authorization-failed,ok", 212)
        record.totalMicros = 1_440
        let line = AccessLog.line(record, format: .json, time: "2026-12-02T06:55:00Z")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["time", "client", "method", "uri", "command", "call", "outcome", "bytes", "total_ms",
                                     "parse_ms", "db_ms", "image_ms", "request_id", "pid"])
        #expect(object["call"] as? String == "login,stream" && object["outcome"] as? String == "authorization-failed,ok")
        #expect(object["total_ms"] as? Double == 1.4 && object["bytes"] as? Int == 212)
        let text = AccessLog.line(record, format: .text, time: "2026-12-02T06:55:00Z")
        #expect(text.hasPrefix("2026-12-02T06:55:00Z client=203.0.113.7 method=POST uri=/iReporter/rpc command=rpc call=login,stream outcome=authorization-failed,ok bytes=212 total_ms=1.4 "))
    }

    /// A token in the query (the Mastodon API takes one there) never reaches the log.
    @Test func theAccessLogFiltersTokens() {
        #expect(AccessLog.withoutSecrets("/api/v1/timelines/home?limit=5&access_token=s3cr3t&x=access_token")
                == "/api/v1/timelines/home?limit=5&access_token=FILTERED&x=access_token")
        #expect(AccessLog.withoutSecrets("/api/v1/statuses/7/favourite?access_token=a&access_token=b")
                == "/api/v1/statuses/7/favourite?access_token=FILTERED&access_token=FILTERED")
        #expect(AccessLog.withoutSecrets("/api/v1/markers?access%5Ftoken=t1&%61ccess_token=t2&Access_Token=t3")
                == "/api/v1/markers?access%5Ftoken=FILTERED&%61ccess_token=FILTERED&Access_Token=FILTERED", "spelt as the server reads it")
        #expect(AccessLog.withoutSecrets("/oauth/token?grant_type=password&username=bob&password=pw&client_secret=s&code=c&code_verifier=v&legacy_password=p")
                == "/oauth/token?grant_type=password&username=bob&password=FILTERED&client_secret=FILTERED&code=FILTERED&code_verifier=FILTERED&legacy_password=FILTERED")
        #expect(AccessLog.withoutSecrets("/iReporter/") == "/iReporter/")
        #expect(AccessLog.withoutSecrets("/a?") == "/a?" && AccessLog.withoutSecrets("/a?&&b") == "/a?&&b")
        let record = APIResponder.Record(client: "203.0.113.7", method: "GET", uri: "/api/v1/markers?access_token=s3cr3t", requestID: "abc")
        #expect(!AccessLog.line(record, format: .text, time: "2026-12-02T06:55:00Z").contains("s3cr3t"))
    }
}

/// A long command's progress line: done of total, the phase's rate and the time left.
struct TaskProgressLineTests {
    @Test func aLineSaysDoneTotalRateAndTimeLeft() {
        #expect(TaskProgress.line("repair", "making thumbnails", done: 1200, of: 6000, elapsedMillis: 3000)
                == "repair: making thumbnails: 1200 of 6000 (20%), 400/s, about 13 s left")
        #expect(TaskProgress.line("migrate-passwords", "re-hashing passwords", done: 3, of: 4000, elapsedMillis: 2000)
                == "migrate-passwords: re-hashing passwords: 3 of 4000 (0%), 1.5/s, about 44 min left")
        #expect(TaskProgress.line("repair", "reading rows", done: 50_000, of: nil, elapsedMillis: 2000)
                == "repair: reading rows: 50000, 25000/s")
        #expect(TaskProgress.line("copy-photos-to-s3", "photo files copied", done: 10, of: 10, elapsedMillis: 500)
                == "copy-photos-to-s3: photo files copied: 10 of 10 (100%), 20/s")
        #expect(TaskProgress.line("search-index", "photos indexed", done: 0, of: 10, elapsedMillis: 0)
                == "search-index: photos indexed: 0 of 10 (0%)")
    }
}
