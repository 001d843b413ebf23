#if canImport(Glibc)
import Glibc
#endif

/// The ping and status pages (php-fpm's `ping.path` and `pm.status_path`)
/// and the readiness page, answered before any command runs. Status is
/// plain text, `?json` for JSON, `?full` (or `?json&full`) with one entry
/// per worker process, `?openmetrics` the OpenMetrics text Prometheus
/// scrapes (`MetricsExposition`).
final class OperatorPages {
    private let pingPath: String
    private let statusPath: String
    private let readyPath: String
    /// The worker's, set once it has its connections; nil: ready_path is not answered.
    var readiness: Readiness?
    private let scoreboard: Scoreboard
    private let metrics: MetricsTable?
    private let listenDescription: String
    private let listenFD: Int32
    /// Where uploads are written (and spooled, with a bucket too): its free space is a metric.
    private let uploadDirectory: String
    private let clock: any TimeSource
    private let wallClock: any WallClock

    init(pingPath: String, statusPath: String, readyPath: String = "", scoreboard: Scoreboard, metrics: MetricsTable? = nil,
         listenDescription: String, listenFD: Int32, uploadDirectory: String = "", clock: any TimeSource = MonotonicClock(),
         wallClock: any WallClock = RealtimeClock()) {
        self.uploadDirectory = uploadDirectory
        self.metrics = metrics
        self.clock = clock
        self.wallClock = wallClock
        self.pingPath = pingPath
        self.statusPath = statusPath
        self.readyPath = readyPath
        self.scoreboard = scoreboard
        self.listenDescription = listenDescription
        self.listenFD = listenFD
    }

    func page(for request: GatewayRequest) -> [UInt8]? {
        guard let uri = request.param("REQUEST_URI") ?? request.param("DOCUMENT_URI") else { return nil }
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0])
        // `openmetrics` and `openmetrics=` alike (Prometheus's `params` sends the latter).
        let query = parts.count > 1 ? parts[1].split(separator: "&").map { String($0.prefix { $0 != "=" }) } : []
        if !pingPath.isEmpty && path == pingPath { return Self.answer("text/plain", "pong\n") }
        if !readyPath.isEmpty && path == readyPath, let readiness {
            let failures = readiness.failures()
            return failures.isEmpty ? Self.answer("text/plain", "ready\n")
                : Self.answer("text/plain", "not ready\n" + failures.map { $0 + "\n" }.joined(),
                              status: "503 Service Unavailable")
        }
        guard !statusPath.isEmpty && path == statusPath else { return nil }
        if query.contains("openmetrics") {
            return Self.answer(OpenMetricsWriter.contentType,
                               MetricsExposition(table: metrics, server: serverFigures()).text)
        }
        let full = query.contains("full")
        return query.contains("json") ? Self.answer("application/json", json(full: full))
                                      : Self.answer("text/plain", text(full: full))
    }

    private static func answer(_ type: String, _ body: String, status: String? = nil) -> [UInt8] {
        let bytes = Array(body.utf8)
        return Array(((status.map { "Status: \($0)\r\n" } ?? "") + "Content-Type: \(type)\r\nContent-Length: \(bytes.count)\r\nExpires: Thu, 19 Nov 1981 08:52:00 GMT\r\nCache-Control: no-store, no-cache, must-revalidate\r\n\r\n").utf8) + bytes
    }

    private struct Figures {
        var fields: [(String, String, isNumber: Bool)] = []
        var processes: [[(String, String, isNumber: Bool)]] = []
    }

    private func figures(full: Bool) -> Figures {
        let workers = scoreboard.occupied
        let now = clock.now.millis
        let active = workers.filter { $0.slot.state == .busy }.count
        var figures = Figures()
        figures.fields = [
            ("pool", "ireporter", false), ("process manager", "static", false),
            ("listen", listenDescription, false),
            ("start time", String(scoreboard.startedAt), true),
            ("start since", String(wallClock.unixSeconds - scoreboard.startedAt), true),
            ("accepted conn", String(scoreboard.accepted), true),
            ("listen queue", listenQueue().map(String.init) ?? "-1", true),
            ("idle processes", String(workers.count - active), true),
            ("active processes", String(active), true),
            ("total processes", String(workers.count), true),
            ("max active processes", String(scoreboard.maxActive), true),
            ("slow requests", String(scoreboard.slowRequests), true),
            ("timed out requests", String(scoreboard.timedOut), true),
            ("crashed workers", String(scoreboard.crashed), true),
        ]
        if full {
            figures.processes = workers.map { index, slot in
                // php-fpm's names; its "-" for a worker serving nothing.
                let request = slot.state == .busy ? scoreboard.request(index) : nil
                return [("pid", String(slot.pid), true),
                        ("state", Self.stateName(slot.state), false),
                        ("requests", String(slot.requests), true),
                        ("request duration", slot.state == .busy || slot.state == .accepting
                            ? String(now - slot.requestStartedMillis) : "0", true),
                        ("request method", request?.method ?? "-", false),
                        ("request URI", request?.uri ?? "-", false),
                        ("last request duration", String(slot.lastRequestMillis), true)]
            }
        }
        return figures
    }

    private func serverFigures() -> MetricsExposition.ServerFigures {
        let workers = scoreboard.occupied.map(\.slot)
        var states: [Scoreboard.State: Int64] = [:]
        for worker in workers { states[worker.state, default: 0] += 1 }
        return MetricsExposition.ServerFigures(
            startedAt: scoreboard.startedAt, accepted: scoreboard.accepted, listenQueue: listenQueue().map(Int64.init),
            workerStates: states, maxActive: scoreboard.maxActive, slowRequests: scoreboard.slowRequests,
            timedOut: scoreboard.timedOut, crashed: scoreboard.crashed,
            preparedStatements: workers.reduce(0) { $0 + $1.preparedStatements },
            uploadFreeBytes: uploadDirectory.isEmpty ? nil : FolderSpace(uploadDirectory)?.freeBytes)
    }

    /// php-fpm's names of a process's states.
    private static func stateName(_ state: Scoreboard.State) -> String {
        switch state {
        case .busy: "Running"
        case .accepting: "Reading headers"
        case .free, .starting, .idle: "Idle"
        }
    }

    private func text(full: Bool) -> String {
        let figures = figures(full: full)
        var out = figures.fields.map { pad($0.0) + $0.1 }.joined(separator: "\n") + "\n"
        for process in figures.processes {
            out += "\n************************\n" + process.map { pad($0.0) + $0.1 }.joined(separator: "\n") + "\n"
        }
        return out
    }

    private func pad(_ key: String) -> String { (key + ":").padding(toLength: 24) }

    private func json(full: Bool) -> String {
        let figures = figures(full: full)
        func object(_ fields: [(String, String, isNumber: Bool)]) -> String {
            "{" + fields.map { key, value, isNumber in
                var writer = PHPJSONWriter()
                writer.string(key)
                writer.raw(":")
                if isNumber { return String(decoding: writer.bytes, as: UTF8.self) + value }
                writer.string(value)
                return String(decoding: writer.bytes, as: UTF8.self)
            }.joined(separator: ",") + "}"
        }
        var out = object(figures.fields)
        if full {
            out.removeLast()
            out += ",\"processes\":[" + figures.processes.map(object).joined(separator: ",") + "]}"
        }
        return out + "\n"
    }

    /// Connections waiting in the backlog (TCP sockets only: Linux reports it
    /// as `tcpi_unacked` of a listening socket).
    private func listenQueue() -> Int? {
        var info = tcp_info()
        var length = socklen_t(MemoryLayout<tcp_info>.size)
        guard getsockopt(listenFD, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return nil }
        return Int(info.tcpi_unacked)
    }
}

extension String {
    fileprivate func padding(toLength length: Int) -> String {
        count >= length ? self + " " : self + String(repeating: " ", count: length - count)
    }
}
