import ArgumentParser
import QuenchConfig
import QuenchComposition
import QuenchHistory
import QuenchServe


/// Options every history command takes.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: databaseHelp)
    var db: String?

    @Option(name: .long, help: "Show volumes in ml or oz (US fl oz); default: `units` in the config file, else the setting.")
    var units: String?

    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false

    /// The configuration with these options, and `more`, over the rest.
    func configuration(_ more: ConfigValues = ConfigValues()) throws -> Configuration {
        var values = more
        values.database = db
        values.units = try HistoryEnvironment.unitOption(units)
        return try HistoryEnvironment.configuration(values)
    }

    func environment() throws -> HistoryEnvironment {
        HistoryEnvironment.process(try configuration())
    }

    /// The environment of a per-person command: `--person` over `QUENCH_PERSON` and the config file.
    func environment(_ who: PersonOption) throws -> HistoryEnvironment {
        var values = ConfigValues()
        values.person = who.person
        return HistoryEnvironment.process(try configuration(values))
    }
}

/// Prints a command's output (nothing for an empty result), checked (`StandardOutputCheck`): straight
/// to the descriptor, so a write that fails is seen even if a later one succeeds.
func emit(_ text: String) {
    guard !text.isEmpty else { return }
    let output = StandardOutput()
    output.write(text + "\n")
    output.flush()
}
