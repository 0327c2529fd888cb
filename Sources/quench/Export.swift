import ArgumentParser
import QuenchServe
import QuenchHistory
import QuenchComposition

extension History.ExportFormat: ExpressibleByArgument {}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write the history as CSV or JSON to stdout.")
    @Option(name: .long, help: databaseHelp) var db: String?
    @Option(help: ArgumentHelp("Only this person's events, goals and devices (default: everyone's).", valueName: "NAME")) var person: String?
    @Option(help: "csv (events) or json (events, goals, settings, devices).") var format: History.ExportFormat = .csv
    @Option(help: "From this time.") var since: String?
    @Option(help: "Before this time.") var until: String?

    func run() throws {
        var output = StandardOutput()
        try History.export(HistoryEnvironment.process(database: db, units: nil, person: person), format: format, since: since, until: until, to: &output)
    }
}
