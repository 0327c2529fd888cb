import ArgumentParser
import QuenchHistory

struct Undo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete the most recent event (reversible with restore).")
    @OptionGroup var options: StoreOptions

    func run() throws {
        emit(try History.undo(options.environment(), json: options.json))
    }
}
