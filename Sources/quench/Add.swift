import ArgumentParser
import QuenchHistory

struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Record a drink that no sensor saw: 250ml, 0.3l, 8oz.")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption
    @Argument(help: "How much: 250ml, 0.3l, 8oz.") var amount: String
    /// `quench add 250 ml`, as people say it (it was "Unexpected argument 'ml'").
    @Argument(help: ArgumentHelp("The unit, when written apart: 250 ml.", visibility: .hidden)) var unit: String?
    @Option(help: "When (default now): HH:MM, 'YYYY-MM-DD HH:MM' or ISO 8601.") var at: String?
    @Option(help: "A note, e.g. 'coffee'.") var note: String?

    func run() throws {
        emit(try History.add(options.environment(who), amount: unit.map { amount + " " + $0 } ?? amount, at: at, note: note, json: options.json))
    }
}
