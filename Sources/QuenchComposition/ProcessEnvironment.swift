import FoundationEssentials
import QuenchConfig
import QuenchCore
import QuenchHistory
import QuenchStore
import Threading
#if canImport(Glibc)
import Glibc
#endif

// The executables' layer: the configuration (command line, environment, files)
// becomes each library's inputs here, so the libraries below know nothing of
// quench.toml or of this process.

extension HistoryEnvironment {
    /// The environment of this process: the configuration's database and
    /// units, the clock, and colour when stdout is a terminal and `NO_COLOR` is unset.
    public static func process(_ configuration: Configuration) -> HistoryEnvironment {
        let variables = ProcessInfo.processInfo.environment
        let noColor = !(variables["NO_COLOR"] ?? "").isEmpty
        let color = isatty(STDOUT_FILENO) == 1 && !noColor && variables["TERM"] != "dumb"
        // `configuration(_:)` has already refused a bad QUENCH_NOW.
        let now = (try? clock(variables)) ?? .wallClockNow
        var environment = HistoryEnvironment(databasePath: configuration.database.value, now: now, units: configuration.units.value,
                                             color: color, variables: variables, person: configuration.person.value)
        environment.upgradeReport = { notice in
            var line = "\(ProcessIdentity.programName): \(notice)\n"
            line.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
        }
        if configuration.person.value != nil, configuration.person.source != .commandLine {
            environment.personNamedIn = configuration.person.source.description
        }
        return environment
    }

    /// `QUENCH_NOW` (ISO 8601 with a zone) stands in for the wall clock in the
    /// history commands and `quench demo`, so the documentation's samples give the
    /// same output any day (Tests/DocSamplesTests); unset or empty, the wall clock.
    public static func clock(_ variables: [String: String]) throws(ConfigError) -> Timestamp {
        guard let text = variables["QUENCH_NOW"], !text.isEmpty else { return .wallClockNow }
        // What a history holds (a year-0 clock reached the database's CHECK in SQLite's words).
        guard text.count <= 64, let time = Timestamp(iso8601: text), IntakeEvent.plausibleTime.contains(time.secondsSince1970) else {
            throw .badValue(.environment("QUENCH_NOW"), key: "QUENCH_NOW",
                            expected: "an ISO 8601 time with a zone, from 1970 to 9999 (2026-11-22T01:58:00Z)",
                            got: "\"\(text.prefix(64))\"")
        }
        return time
    }

    /// The same from `--db`, `--units` and `--person` alone: a `HistoryError` or a `ConfigError`.
    public static func process(database: String?, units: String?, person: String? = nil) throws -> HistoryEnvironment {
        var values = ConfigValues(database: database, units: try unitOption(units))
        values.person = person
        return process(try configuration(values))
    }

    /// `quench`'s configuration: `commandLine` over `QUENCH_DB`/`QUENCH_LOG`,
    /// the user's file, /etc/quench/quench.toml, and the defaults (the store's
    /// XDG location last).
    public static func configuration(_ commandLine: ConfigValues) throws(ConfigError) -> Configuration {
        let inputs = ConfigInputs.process()
        _ = try clock(inputs.variables)
        return try Configuration.resolve(commandLine: commandLine, for: .quench,
                                         defaultDatabase: StoreLocation.defaultPath(environment: inputs.variables), inputs: inputs)
    }
}

extension Configuration {
    /// `quench config show`: a table of each key, its value and where it came
    /// from, then the files looked at; or the same as JSON.
    public func shown(json: Bool) -> String {
        guard !json else { return OutputText.json(report(abbreviatingHome: false)) }
        let report = report(abbreviatingHome: true)
        return OutputText.table(["key", "value", "source"], report.settings.map { [$0.key, $0.value.description, $0.source] })
            + "\n\nfiles (the first that sets a key wins):\n"
            + OutputText.table(["file", "role", "status"], report.files.map { [$0.path, $0.role, $0.status] })
    }
}

extension KeySpec {
    /// `quench config keys`: the key table as text columns, or as docs/service.md's Markdown.
    public static func shown(markdown: Bool) -> String {
        guard !markdown else { return markdownTable }
        return OutputText.table(["key", "takes", "default", "environment", "command line"], all.map { spec in
            [spec.key.description, spec.expected, spec.defaultText, spec.environment ?? "", spec.flags.joined(separator: ", ")]
        }) + "\n"
    }
}
