import ArgumentParser
import QuenchHistory

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read an export (CSV or JSON); events already stored are skipped.",
        discussion: """
            Each person the file names keeps their own history (added when the household lacks them); rows naming \
            nobody are the household's only person's. With --person NAME (or QUENCH_PERSON, or `person` in the config \
            file) the file is NAME's: one person's export, whatever it calls them, goes to NAME whole (events, goals, \
            devices); a file holding several people's history is refused, naming them. All of the file is imported or \
            none of it; other commands keep writing while it is read.
            """)
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption
    @Argument(help: "The file, or - for stdin.") var file: String

    func run() throws {
        emit(try History.importFile(options.environment(who), path: file, json: options.json))
    }
}
