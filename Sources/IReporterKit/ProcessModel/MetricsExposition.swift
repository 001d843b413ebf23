/// The status page's `?openmetrics`: the installation's counters (the
/// `MetricsTable` every process of it shares) and this server's workers
/// (its `Scoreboard`), in the OpenMetrics text format. docs/DEPLOY.md,
/// "Metrics", lists each metric with its meaning.
struct MetricsExposition {
    /// What the status page shows of this server (one supervisor and its workers).
    struct ServerFigures {
        var startedAt: Int64 = 0
        var accepted: Int64 = 0
        /// nil: not known (a unix socket).
        var listenQueue: Int64?
        var workerStates: [Scoreboard.State: Int64] = [:]
        var maxActive: Int64 = 0
        var slowRequests: Int64 = 0
        var timedOut: Int64 = 0
        var crashed: Int64 = 0
        var preparedStatements: Int64 = 0
        /// nil: not known.
        var uploadFreeBytes: Int64?
    }

    let text: String

    init(table: MetricsTable?, server: ServerFigures) {
        var out = OpenMetricsWriter()
        if let table { Self.write(table, into: &out) }
        Self.write(server, into: &out)
        text = out.finished
    }

    private static func write(_ table: MetricsTable, into out: inout OpenMetricsWriter) {
        out.family("ireporter_requests", .counter,
                   help: "Requests answered, by command (a JSON-RPC batch's calls one each) and outcome (ok or the failure's name).")
        // (The `other` series, there from the start, once something is in it.)
        for series in table.requests where series.count > 0 {
            out.sample("ireporter_requests_total", ["command": series.command, "outcome": series.outcome], series.count)
        }
        out.family("ireporter_request_duration_seconds", .histogram,
                   help: "Time from accepting a request to its answer written, by command.", unit: "seconds")
        for series in table.durations where series.count > 0 {
            var cumulative: Int64 = 0
            for (index, count) in series.buckets.enumerated() {
                cumulative += count
                let bound = index < MetricsTable.bucketMillis.count
                    ? OpenMetricsWriter.bound(micros: MetricsTable.bucketMillis[index] * 1000) : "+Inf"
                out.sample("ireporter_request_duration_seconds_bucket", [("command", series.command), ("le", bound)], String(cumulative))
            }
            out.sample("ireporter_request_duration_seconds_count", ["command": series.command], cumulative)
            out.sample("ireporter_request_duration_seconds_sum", [("command", series.command)],
                       OpenMetricsWriter.seconds(micros: series.sumMicros))
        }
        let errors: [(family: String, help: String, kinds: [(String, MetricsTable.Counter)])] = [
            ("ireporter_database_errors", "Errors MariaDB Connector/C reported, handled or not (a retried deadlock too), by kind.",
             [("connection", .databaseConnectionErrors), ("retryable", .databaseRetryableErrors), ("other", .databaseOtherErrors)]),
            ("ireporter_redis_errors", "Errors talking to Redis, by kind.",
             [("connection", .redisConnectionErrors), ("reply", .redisReplyErrors), ("other", .redisOtherErrors)]),
            ("ireporter_s3_errors", "Failed requests to the S3 bucket, by kind (transfer: no answer; status: an error answer).",
             [("transfer", .s3TransferErrors), ("status", .s3StatusErrors)]),
        ]
        for (family, help, kinds) in errors {
            out.family(family, .counter, help: help)
            for (kind, counter) in kinds { out.sample(family + "_total", ["kind": kind], table.value(counter)) }
        }
        out.family("ireporter_throttle_refusals", .counter, help: "Logins and registrations refused by the throttles, by throttle.")
        out.sample("ireporter_throttle_refusals_total", ["throttle": "login"], table.value(.loginThrottled))
        out.sample("ireporter_throttle_refusals_total", ["throttle": "registration"], table.value(.registrationThrottled))
        out.family("ireporter_stream_changes_unconfirmed", .counter,
                   help: "Changes of the stream some host's stream answer file listener did not confirm in time (several hosts).")
        out.sample("ireporter_stream_changes_unconfirmed_total", [:], table.value(.streamChangesUnconfirmed))
        out.family("ireporter_live_publish_failures", .counter,
                   help: "Announcements of new photos and notifications the live feed (Nchan) did not take: subscribers missed them.")
        out.sample("ireporter_live_publish_failures_total", [:], table.value(.livePublishFailures))
        out.family("ireporter_upload_bytes", .counter, help: "Bytes of multipart (photo) request bodies read.", unit: "bytes")
        out.sample("ireporter_upload_bytes_total", [:], table.value(.uploadBytes))
    }

    private static func write(_ server: ServerFigures, into out: inout OpenMetricsWriter) {
        out.family("ireporter_worker_processes", .gauge, help: "This server's worker processes, by state.")
        let states: [(String, Scoreboard.State)] = [("starting", .starting), ("idle", .idle), ("accepting", .accepting), ("busy", .busy)]
        for (name, state) in states { out.sample("ireporter_worker_processes", ["state": name], server.workerStates[state] ?? 0) }
        if let queue = server.listenQueue {
            out.family("ireporter_listen_queue", .gauge, help: "Connections waiting in the listening socket's backlog (TCP only).")
            out.sample("ireporter_listen_queue", [:], queue)
        }
        out.family("ireporter_max_active_processes", .gauge, help: "The most workers busy at once since this server started.")
        out.sample("ireporter_max_active_processes", [:], server.maxActive)
        out.family("ireporter_prepared_statements", .gauge,
                   help: "Prepared statements this server's workers hold on their database connections, summed.")
        out.sample("ireporter_prepared_statements", [:], server.preparedStatements)
        let counters: [(String, String, Int64)] = [
            ("ireporter_accepted_connections", "Connections this server accepted.", server.accepted),
            ("ireporter_slow_requests", "Requests slower than slow_request_ms.", server.slowRequests),
            ("ireporter_timed_out_requests", "Requests whose worker was killed after request_timeout.", server.timedOut),
            ("ireporter_crashed_workers", "Workers that died of a signal or exited with an error.", server.crashed),
        ]
        for (family, help, value) in counters {
            out.family(family, .counter, help: help)
            out.sample(family + "_total", [:], value)
        }
        if let free = server.uploadFreeBytes {
            out.family("ireporter_upload_dir_free_bytes", .gauge, help: "Bytes the server's user may still write in upload_dir.",
                       unit: "bytes")
            out.sample("ireporter_upload_dir_free_bytes", [:], free)
        }
        out.family("ireporter_start_time_seconds", .gauge, help: "When this server started, in Unix time.", unit: "seconds")
        out.sample("ireporter_start_time_seconds", [:], server.startedAt)
    }
}
