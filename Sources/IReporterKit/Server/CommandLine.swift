#if canImport(Glibc)
import Glibc
#endif

public enum IReporterCommandLine {
    static let usage = """
        usage: ireporter [--config FILE] [--listen ADDRESS] [--workers N]
               ireporter --check-config [--config FILE]
               ireporter --help | --version

        The iReporter photo API as a FastCGI server. It listens on ADDRESS
        (a unix socket path or HOST:PORT), or on the socket it inherits on
        fd 0 when started by spawn-fcgi, Apache mod_fcgid or systemd.
        Settings come from FILE (default /etc/ireporter/ireporter.conf),
        then IREPORTER_* environment variables, then the flags above; every
        setting is listed in docs/CONFIGURATION.md.

        """

    /// Runs the command line; returns the exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") { print(usage, terminator: ""); return 0 }
        if arguments.contains("--version") { print("ireporter \(Server.version)"); return 0 }
        let checkOnly = arguments.contains("--check-config")
        let configuration: Configuration
        do {
            configuration = try Configuration.load(arguments: arguments.filter { $0 != "--check-config" },
                                                   environment: environment())
        } catch {
            Log.error("configuration:\n\(error)")
            return 2
        }
        if checkOnly {
            print("configuration OK" + (configuration.sourceFile.map { " (\($0))" } ?? " (no file)"))
            return 0
        }
        let reloadArguments = arguments
        return Server.run(configuration) { () throws(ConfigurationError) -> Configuration in
            try Configuration.load(arguments: reloadArguments, environment: environment())
        }
    }

    private static func environment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
