/// Where this process counts what the status page's `?openmetrics` shows:
/// the installation's `MetricsTable`, set once at start (before the
/// supervisor forks). Reached from the few places that count (the library
/// wrappers' errors, the throttles' refusals, the upload body) without
/// passing a table through every layer, as `Log` is. Unset (the command-line
/// tools, the tests), nothing is counted.
public enum Metrics {
    nonisolated(unsafe) public static var table: MetricsTable?

    public static func count(_ counter: MetricsTable.Counter, _ amount: Int64 = 1) {
        table?.add(counter, amount)
    }
}
