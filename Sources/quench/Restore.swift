import ArgumentParser
import QuenchHistory

struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Bring back a deleted event.")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption
    @Argument(help: "The event's id (`quench log --deleted` lists deleted ones).") var id: Int64

    func run() throws {
        emit(try History.restore(options.environment(who), id: id, json: options.json))
    }
}
