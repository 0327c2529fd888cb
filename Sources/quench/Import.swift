import ArgumentParser
import QuenchHistory

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Read an export (CSV or JSON); events already stored are skipped.")
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption
    @Argument(help: "The file, or - for stdin.") var file: String

    func run() throws {
        emit(try History.importFile(options.environment(who), path: file, json: options.json))
    }
}
