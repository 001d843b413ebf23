/// Counts each request into the installation's `MetricsTable`, from what
/// the access log says of it (`APIResponder.Record`): one count per command
/// (each call of a JSON-RPC batch its own) with its outcome, and one
/// duration per request. The labels are the server's words only: a command
/// or method the server does not know is `unknown`, an outcome that is not
/// one of its names `other`, so no client can add series.
struct RequestMetrics {
    /// The names a `command` label may take besides `unknown`, `none` and `other`.
    private let commands: Set<String>
    private let table: MetricsTable?

    /// `commands`: the form API's commands (= the JSON-RPC methods); the
    /// Flickr methods and the server's own pages are added here.
    init(table: MetricsTable?, commands: some Sequence<String>) {
        self.table = table
        self.commands = Set(commands).union(FlickrMethod.allCases.map(\.rawValue)).union(["rpc.discover"])
    }

    struct Call: Equatable {
        var command: String, outcome: String
        init(_ command: String, _ outcome: String) { (self.command, self.outcome) = (command, outcome) }
    }

    struct Labels: Equatable {
        var calls: [Call]
        /// The command the duration is counted under: a batch's is `rpc-batch`.
        var durationCommand: String
    }

    func labels(_ record: APIResponder.Record) -> Labels {
        // Whatever name it came with (a form's `command=status` too).
        if record.outcome == "unknown-command" {
            return Labels(calls: [Call("unknown", "unknown-command")], durationCommand: "unknown")
        }
        switch record.command {
        case "status", "size", "mastodon":
            return Labels(calls: [Call(record.command, outcome(record.outcome))], durationCommand: record.command)
        case "rpc":
            let methods = record.call.split(separator: ",").map(String.init)
            let outcomes = record.outcome.split(separator: ",").map(String.init)
            guard record.call != "-", methods.count == outcomes.count else {
                // No call at all (a body that is no JSON-RPC).
                return Labels(calls: [Call("rpc", outcome(record.outcome))], durationCommand: "rpc")
            }
            let calls = zip(methods, outcomes).map { Call(command($0), outcome($1)) }
            return Labels(calls: calls, durationCommand: calls.count == 1 ? calls[0].command : "rpc-batch")
        case "flickr":
            let method = command(record.call)
            return Labels(calls: [Call(method, outcome(record.outcome))], durationCommand: method)
        default:
            let name = record.command == "-" ? "none" : command(record.command)
            return Labels(calls: [Call(name, outcome(record.outcome))], durationCommand: name)
        }
    }

    func record(_ record: APIResponder.Record) {
        guard let table else { return }
        let labels = labels(record)
        for call in labels.calls { table.countRequest(command: call.command, outcome: call.outcome) }
        table.observeDuration(command: labels.durationCommand, micros: record.totalMicros)
    }

    private func command(_ name: String) -> String { commands.contains(name) ? name : "unknown" }

    /// An outcome is a name the server made (`authorization-failed`,
    /// `flickr-error-1`): lower-case letters, digits and `-`.
    private func outcome(_ name: String) -> String {
        !name.isEmpty && name.utf8.count <= MetricsTable.maxLabelBytes
            && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D } ? name : "other"
    }
}
