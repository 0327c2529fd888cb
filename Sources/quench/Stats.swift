import ArgumentParser
import QuenchHistory

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Totals, averages and streaks over the last days.")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption
    @Option(help: "The last N days, today included.") var days: Int?
    @Flag(help: "The last 7 days.") var week = false
    @Flag(help: "The last 30 days.") var month = false
    @Flag(help: "The last 365 days.") var year = false

    func validate() throws {
        if [days != nil, week, month, year].filter({ $0 }).count > 1 {
            throw ValidationError("choose one of --days, --week, --month, --year")
        }
    }

    func run() throws {
        let period = days ?? (year ? 365 : month ? 30 : 7)
        emit(try History.stats(options.environment(who), days: period, json: options.json))
    }
}
