import ArgumentParser
import QuenchHistory

struct Undo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete the event stored last, whatever time it was given (reversible with restore).")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption

    func run() throws {
        emit(try History.undo(options.environment(who), json: options.json))
    }
}
