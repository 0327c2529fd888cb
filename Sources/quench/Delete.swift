import ArgumentParser
import QuenchHistory

struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete an event (reversible with restore).")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption
    @Argument(help: "The event's id, as `quench log` shows it.") var id: Int64

    func run() throws {
        emit(try History.delete(options.environment(who), id: id, json: options.json))
    }
}
