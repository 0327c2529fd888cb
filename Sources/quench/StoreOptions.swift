import ArgumentParser
import QuenchHistory

/// Options every history command takes.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The database file (default: $QUENCH_DB, else $XDG_DATA_HOME/quench/quench.sqlite).")
    var db: String?

    @Option(name: .long, help: "Show volumes in ml or oz (US fl oz); default: the setting.")
    var units: String?

    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false

    func environment() throws -> HistoryEnvironment {
        try HistoryEnvironment.process(database: db, units: units)
    }
}

/// Prints a command's output (nothing for an empty result).
func emit(_ text: String) {
    if !text.isEmpty { print(text) }
}
