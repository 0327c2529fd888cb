import ArgumentParser
import QuenchHistory

struct CalendarCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "calendar", abstract: "A month grid of each day's intake against the goal.")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption
    @Option(help: "The month, as YYYY-MM (default: this month).") var month: String?

    func run() throws {
        emit(try History.calendar(options.environment(who), month: month, json: options.json))
    }
}
