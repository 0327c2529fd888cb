import ArgumentParser
import QuenchHistory

struct Log: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The events, newest first, with their ids.")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption
    @Option(help: "From this time: YYYY-MM-DD, 'YYYY-MM-DD HH:MM', HH:MM, today, yesterday or ISO 8601.") var since: String?
    @Option(help: "Before this time (same forms as --since); a day (YYYY-MM-DD, today, yesterday) includes that whole day.") var until: String?
    @Option(help: "Only this device's events.") var device: String?
    @Option(help: "At most this many events (default 50 for text).") var limit: Int?
    @Option(help: "Only the events after this one (an ID) in the log's order: the next page of a log cut short.") var before: Int64?
    @Flag(help: "Include deleted events.") var deleted = false
    @Flag(help: "Print CSV (the export's columns).") var csv = false

    func validate() throws {
        if csv && options.json { throw ValidationError("--csv and --json: choose one") }
    }

    func run() throws {
        var output = StandardOutput()
        try History.log(options.environment(who), since: since, until: until, device: device, limit: limit,
                        before: before, includeDeleted: deleted, csv: csv, json: options.json, to: &output)
    }
}
