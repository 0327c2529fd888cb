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
    @Option(help: "From this time: YYYY-MM-DD, 'YYYY-MM-DD HH:MM', HH:MM, today, yesterday or ISO 8601.") var since: String?
    @Option(help: "Before this time (same forms as --since); a day (YYYY-MM-DD, today, yesterday) includes that whole day.") var until: String?

    func run() throws {
        var output = StandardOutput()
        let (environment, note) = try HistoryEnvironment.process(database: db, units: nil, person: person).everyoneUnlessNamedHere()
        if let note { FileHandleStderr.write("quench: export: \(note)\n") }
        try History.export(environment, format: format, since: since, until: until, to: &output)
    }
}
