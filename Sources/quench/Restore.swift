import ArgumentParser
import QuenchHistory

struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring back a deleted event (ID), or the whole history from a backup (FILE).",
        discussion: """
            `quench restore 12` undeletes event 12. `quench restore FILE` checks the backup (an undamaged Quench \
            database this version can read) before replacing anything, then puts it in place of the database in one \
            transaction, keeping the history it replaces beside it (quench-replaced-STAMP.sqlite). A running gateway \
            waits for it and goes on with the restored history (docs/backup.md).
            """)
    @OptionGroup var options: StoreOptions
    @OptionGroup var who: PersonOption
    @Argument(help: "The event's id (`quench log --deleted` lists deleted ones), or a backup file (a path: ./12 for a file named 12).")
    var target: String

    func run() throws {
        if let id = Int64(target) {
            emit(try History.restore(options.environment(who), id: id, json: options.json))
        } else {
            emit(try History.restoreBackup(options.environment(), file: target, json: options.json))
        }
    }
}
