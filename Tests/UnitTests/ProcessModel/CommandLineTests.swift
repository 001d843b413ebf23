@testable import IReporterKit
import Testing

struct CommandLineTests {
    typealias Invocation = IReporterCommandLine.Invocation

    private func parse(_ arguments: String...) -> Result<Invocation, IReporterCommandLine.UsageError> {
        IReporterCommandLine.parse(arguments)
    }

    private func message(_ result: Result<Invocation, IReporterCommandLine.UsageError>) -> String? {
        if case .failure(let error) = result { return error.message }
        return nil
    }

    @Test func anUnknownCommandIsNamedWithTheNearestOne() {
        #expect(message(parse("migrat")) == "unknown command 'migrat'; did you mean 'migrate'? (ireporter help lists them)")
        #expect(message(parse("--config", "x.conf", "reapir")) == "unknown command 'reapir'; did you mean 'repair'? (ireporter help lists them)")
        #expect(message(parse("chek")) == "unknown command 'chek'; did you mean 'check'? (ireporter help lists them)")
        #expect(message(parse("bogus-command")) == "unknown command 'bogus-command' (ireporter help lists them)",
                "nothing near: no guess (and not \"needs a value\")")
        #expect(message(parse("help", "migrat"))?.contains("did you mean 'migrate'") == true)
    }

    @Test func everyInvocationOfTheScriptsAndDocsStillParses() throws {
        #expect(try parse("--config", "/etc/ireporter/ireporter.conf").get()
                == Invocation(configurationArguments: ["--config", "/etc/ireporter/ireporter.conf"]))
        #expect(try parse("--config", "c", "--check-config").get().checkConfig)
        #expect(try parse("--listen", "127.0.0.1:9000", "--workers=6").get().configurationArguments
                == ["--listen", "127.0.0.1:9000", "--workers", "6"])
        let repair = try parse("--config", "c", "repair", "--yes", "--grace", "5").get()
        #expect(repair.command == .repair && repair.flags == ["--yes"] && repair.values["--grace"] == "5")
        #expect(repair.configurationArguments == ["--config", "c"])
        #expect(try parse("repair", "--dry-run", "--config", "c").get().flags == ["--dry-run"])
        #expect(try parse("search-index", "--restart").get().flags == ["--restart"])
        #expect(try parse("duplicate-usernames", "--rename").get().command == .duplicateUsernames)
        #expect(try parse("convert-innodb", "--dry-run").get().flags == ["--dry-run"])
        for command in ["migrate", "migrate-passwords", "copy-photos-to-s3", "check"] {
            #expect(try parse(command, "--config", "c").get().command == Subcommand(rawValue: command))
        }
        #expect(try parse("--config", "repair").get().command == nil, "an option's value is not a command")
    }

    @Test func usageErrorsNameTheProblem() {
        #expect(message(parse("migrate", "--yes")) == "unknown option --yes for migrate (ireporter migrate --help)")
        #expect(message(parse("--bogus")) == "unknown option --bogus (ireporter --help)")
        #expect(message(parse("--config")) == "--config needs a value")
        #expect(message(parse("repair", "--grace", "soon")) == "--grace needs a whole number of seconds, not 'soon'")
        #expect(message(parse("migrate", "repair")) == "unexpected argument 'repair' (ireporter --help)")
        #expect(message(parse("migrate", "--check-config"))?.contains("--check-config is the server's") == true)
    }

    @Test func exitStatusesAreZeroOneTwo() {
        #expect(IReporterCommandLine.run(["--version"]) == 0)
        #expect(IReporterCommandLine.run(["help"]) == 0)
        #expect(IReporterCommandLine.run(["migrate", "--help"]) == 0)
        #expect(IReporterCommandLine.run(["migrat"]) == 2)
        #expect(IReporterCommandLine.run(["repair", "--rename"]) == 2)
        #expect(IReporterCommandLine.run(["--check-config", "--config", "/nonexistent/ireporter.conf"]) == 1,
                "--check-config's finding is a failure, not a usage error")
        #expect(IReporterCommandLine.run(["migrate", "--config", "/nonexistent/ireporter.conf"]) == 2)
    }

    @Test func eachCommandHasItsOwnHelp() throws {
        let help = Subcommand.allCases.map(\.helpText)
        #expect(Set(help).count == Subcommand.allCases.count)
        for command in Subcommand.allCases {
            #expect(command.helpText.hasPrefix("usage: ireporter \(command.name)"))
            #expect(IReporterCommandLine.usage.contains("  \(command.name) "), "the global page lists \(command.name)")
            // faults/run.py tells a binary with repair by this line.
            #expect(command == .help || IReporterCommandLine.usage.contains("\n       \(command.usage)\n"), "and shows its usage")
            for flag in command.flags + command.valueOptions {
                #expect(command.usage.contains(flag), "\(command.name)'s usage shows \(flag)")
            }
        }
        let asked = try parse("repair", "--help").get()
        #expect(asked.help && asked.command == .repair)
        #expect(try parse("help", "repair").get().helpTopic == .repair)
    }
}
