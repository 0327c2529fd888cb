import ArgumentParser
import QuenchHistory

struct Today: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Intake so far today against the goal.")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption
    @Option(help: "Another day instead: YYYY-MM-DD, today or yesterday (its last sip is the last before it ended).") var date: String?

    func run() throws {
        emit(try History.today(options.environment(who), date: date, json: options.json))
    }
}
