import ArgumentParser
import QuenchHistory

struct Undo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete the most recent event (reversible with restore).")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption

    func run() throws {
        emit(try History.undo(options.environment(who), json: options.json))
    }
}
