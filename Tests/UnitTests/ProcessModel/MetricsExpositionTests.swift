import Testing
@testable import IReporterKit

/// The status page's `?openmetrics`: the OpenMetrics text format, and the
/// labels a request is counted under (never a client's own text).
struct MetricsExpositionTests {
    @Test func aFamilyHasItsTypeUnitAndHelpBeforeItsSamples() {
        var out = OpenMetricsWriter()
        out.family("x_seconds", .gauge, help: "a \\ b\nc", unit: "seconds")
        out.sample("x_seconds", ["a": "q\"\\\n"], 5)
        #expect(out.finished == """
            # TYPE x_seconds gauge
            # UNIT x_seconds seconds
            # HELP x_seconds a \\\\ b\\nc
            x_seconds{a="q\\"\\\\\\n"} 5
            # EOF

            """)
    }

    @Test func secondsAreWrittenExactly() {
        #expect(OpenMetricsWriter.seconds(micros: 0) == "0.000000")
        #expect(OpenMetricsWriter.seconds(micros: 1000) == "0.001000")
        #expect(OpenMetricsWriter.seconds(micros: 2_500_000) == "2.500000")
        #expect(OpenMetricsWriter.seconds(micros: 61_000_007) == "61.000007")
        #expect(MetricsTable.bucketMillis.map { OpenMetricsWriter.bound(micros: $0 * 1000) }
                == ["0.001", "0.002", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "5.0"])
    }

    @Test func theHistogramIsCumulativeAndItsCountIsTheInfBucket() {
        let table = MetricsTable()
        table.observeDuration(command: "stream", micros: 1500)
        table.observeDuration(command: "stream", micros: 7_000_000)
        let text = MetricsExposition(table: table, server: .init()).text
        #expect(text.contains("ireporter_request_duration_seconds_bucket{command=\"stream\",le=\"0.001\"} 0\n"))
        #expect(text.contains("ireporter_request_duration_seconds_bucket{command=\"stream\",le=\"0.002\"} 1\n"))
        #expect(text.contains("ireporter_request_duration_seconds_bucket{command=\"stream\",le=\"5.0\"} 1\n"))
        #expect(text.contains("ireporter_request_duration_seconds_bucket{command=\"stream\",le=\"+Inf\"} 2\n"))
        #expect(text.contains("ireporter_request_duration_seconds_count{command=\"stream\"} 2\n"))
        #expect(text.contains("ireporter_request_duration_seconds_sum{command=\"stream\"} 7.001500\n"))
        #expect(text.hasSuffix("\n# EOF\n"))
    }

    @Test func workerFiguresAreGauges() {
        var server = MetricsExposition.ServerFigures()
        server.workerStates = [.idle: 3, .busy: 1]
        server.listenQueue = 7
        server.preparedStatements = 12
        server.uploadFreeBytes = 5_000_000_000
        let text = MetricsExposition(table: nil, server: server).text
        #expect(text.contains("ireporter_worker_processes{state=\"idle\"} 3\n"))
        #expect(text.contains("ireporter_worker_processes{state=\"busy\"} 1\n"))
        #expect(text.contains("ireporter_worker_processes{state=\"starting\"} 0\n"))
        #expect(text.contains("ireporter_listen_queue 7\n"))
        #expect(text.contains("ireporter_prepared_statements 12\n"))
        #expect(text.contains("ireporter_upload_dir_free_bytes 5000000000\n"))
        #expect(!MetricsExposition(table: nil, server: .init()).text.contains("listen_queue"), "unknown: left out")
        #expect(!MetricsExposition(table: nil, server: .init()).text.contains("free_bytes"), "unknown: left out")
    }

    private let metrics = RequestMetrics(table: nil, commands: ["stream", "login", "upload"])

    private func record(_ command: String, call: String = "-", _ outcome: String) -> APIResponder.Record {
        var record = APIResponder.Record()
        (record.command, record.call, record.outcome) = (command, call, outcome)
        return record
    }

    @Test func aCommandTheServerDoesNotKnowIsUnknown() {
        #expect(metrics.labels(record("stream", "ok")) == .init(calls: [.init("stream", "ok")], durationCommand: "stream"))
        #expect(metrics.labels(record("x%20y", "unknown-command"))
                == .init(calls: [.init("unknown", "unknown-command")], durationCommand: "unknown"))
        #expect(metrics.labels(record("status", "unknown-command")).calls == [.init("unknown", "unknown-command")],
                "a form's command=status is no status page")
        #expect(metrics.labels(record("-", "malformed")).calls == [.init("none", "malformed")])
        #expect(metrics.labels(record("status", "ok")).calls == [.init("status", "ok")])
    }

    @Test func eachCallOfABatchIsCountedWithItsOutcome() {
        #expect(metrics.labels(record("rpc", call: "login,stream,bogus", "authorization-failed,ok,method-not-found"))
                == .init(calls: [.init("login", "authorization-failed"), .init("stream", "ok"), .init("unknown", "method-not-found")],
                         durationCommand: "rpc-batch"))
        #expect(metrics.labels(record("rpc", call: "stream", "ok")) == .init(calls: [.init("stream", "ok")], durationCommand: "stream"))
        #expect(metrics.labels(record("rpc", "invalid-request")) == .init(calls: [.init("rpc", "invalid-request")], durationCommand: "rpc"))
    }

    @Test func flickrMethodsAreTheirNamesOrUnknown() {
        #expect(metrics.labels(record("flickr", call: "flickr.photos.search", "ok")).calls == [.init("flickr.photos.search", "ok")])
        #expect(metrics.labels(record("flickr", call: "flickr.x.y", "flickr-error-112")).calls == [.init("unknown", "flickr-error-112")])
    }

    /// The Mastodon API is one command, whatever its path: a path is the client's text.
    @Test func theMastodonAPIIsCountedAsOne() {
        #expect(metrics.labels(record("mastodon", call: "%2Fapi%2Fv1%2Fstatuses", "ok"))
                == .init(calls: [.init("mastodon", "ok")], durationCommand: "mastodon"))
        #expect(metrics.labels(record("mastodon", call: "%2Fapi%2Fv9%2Fx", "http-404")).calls == [.init("mastodon", "http-404")])
    }

    @Test func anOutcomeThatIsNoNameOfTheServersIsOther() {
        #expect(metrics.labels(record("stream", "Weird Outcome")).calls == [.init("stream", "other")])
        #expect(metrics.labels(record("stream", String(repeating: "a", count: 40))).calls == [.init("stream", "other")])
    }
}
