import ArgumentParser
import QuenchHistory

struct Today: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Intake so far today against the goal.")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption

    func run() throws {
        emit(try History.today(options.environment(who), json: options.json))
    }
}
