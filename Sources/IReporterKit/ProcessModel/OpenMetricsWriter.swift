/// Text in the OpenMetrics 1.0 exposition format (what Prometheus scrapes):
/// each family's `# TYPE`, `# HELP` and `# UNIT` lines, then its samples,
/// and `# EOF` at the end.
struct OpenMetricsWriter {
    static let contentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    enum Kind: String { case counter, gauge, histogram }

    private(set) var text = ""

    /// Starts a family. A counter's samples are `name_total`; with a `unit`,
    /// `name` must end in `_` + unit (the format's rule).
    mutating func family(_ name: String, _ kind: Kind, help: String, unit: String? = nil) {
        precondition(unit.map { name.hasSuffix("_" + $0) } ?? true, "\(name) must end in its unit")
        text += "# TYPE \(name) \(kind.rawValue)\n"
        if let unit { text += "# UNIT \(name) \(unit)\n" }
        text += "# HELP \(name) \(Self.escaped(help, quote: false))\n"
    }

    mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String> = [:], _ value: Int64) {
        sample(name, labels.map { ($0.key, $0.value) }, String(value))
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escaped($0.1, quote: true))\"" }.joined(separator: ",") + "}"
        }
        text += " \(value)\n"
    }

    /// The whole exposition, `# EOF` included.
    var finished: String { text + "# EOF\n" }

    /// A label value or help text: `\`, newline (and `"` in a label value) escaped.
    static func escaped(_ value: String, quote: Bool) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\"" where quote: out += "\\\""
            default: out.append(character)
            }
        }
        return out
    }

    /// Microseconds as seconds, exactly (`1.234567`).
    static func seconds(micros: Int64) -> String {
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// A bucket's bound as clients write it (`0.001`, `1.0`): Prometheus
    /// keeps `le` as written, so queries name it so.
    static func bound(micros: Int64) -> String {
        var text = seconds(micros: micros)
        while text.hasSuffix("0") && !text.hasSuffix(".0") { text.removeLast() }
        return text
    }
}
